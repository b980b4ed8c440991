"""The session state of one loop request, as layers: the todo board, notes and memory hits.

`select_state(...)`: the todo board is the state layer; notes (newest `task_state` and
`blocker` pinned) the evidence layer; memory hits, weighted by (0.8 + 0.4 * importance)
/ 1.2, the memory layer. Each layer stays within its own budget; packets render in a
stable order for prompt caches (docs/compaction.md, "The session state in each request").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ctxagent.context import compress, structure
from ctxagent.context.budget import classify_query, layer_budgets
from ctxagent.context.compaction.sections import is_summary_message
from ctxagent.context.messages import content_text
from ctxagent.context.packet import LAYERS, ContextConfig, ContextPacket, to_epoch
from ctxagent.context.select import Candidate, score, select, sketch, sketch_jaccard
from ctxagent.context.state.render import render_todos, state_sections
from ctxagent.errors import ConfigError

#: Note types whose newest note is pinned (see the module doc).
PINNED_NOTE_TYPES = ("task_state", "blocker")
#: Characters of each part of the scoring query (current request, task) that count.
QUERY_CHARS = 2000
#: `[context]` keys of `ContextConfig` that shape the loop's selection.
SELECTION_KEYS = ("min_relevance", "enable_compression", "relevance_weight", "recency_weight", "half_life_s",
                  "layer_shares", "dedup_threshold", "adaptive_layers")
_SEP = structure.separator("Evidence")


@dataclass
class StateSelection:
    """What `select_state` chose: `parts` ((name, text) for `build_request`), `cands` (every note
    and memory candidate with its decision), `budgets`/`used` (tokens per layer), `query`,
    `query_type`, `summary_state` (todo board and selected notes, for a compaction summary)."""

    parts: list[tuple[str, str]] = field(default_factory=list)
    cands: list[Candidate] = field(default_factory=list)
    budgets: dict[str, int] = field(default_factory=dict)
    used: dict[str, int] = field(default_factory=dict)
    query: str = ""
    query_type: str = "general"
    summary_state: dict = field(default_factory=dict)


def selection_config(context: Any = None) -> ContextConfig:
    """A ContextConfig from `Settings.context` (only SELECTION_KEYS count; others ignored).

    Raises ConfigError naming the key when a value is out of range.
    """
    values = {k: getattr(context, k) for k in SELECTION_KEYS if getattr(context, k, None) is not None}
    try:
        return ContextConfig(**values)
    except ValueError as exc:
        key = next((k for k in values if k in str(exc)), None)
        raise ConfigError(f"[context] {exc}", setting=f"context.{key}" if key else None) from None


def scoring_query(state: dict, convo: list[dict]) -> str:
    """The text relevance is scored against: the current request (the latest user message
    that is not a compaction summary, and the loop's `state["task"]`) and the task (the
    first user message), each cut to QUERY_CHARS, repeats left out, one a line."""
    users = [m for m in convo if m.get("role") == "user" and not is_summary_message(m)]
    parts = [content_text(users[-1]) if users else "", str(state.get("task") or ""),
             content_text(users[0]) if users else ""]
    out: list[str] = []
    for part in (p.strip()[:QUERY_CHARS] for p in parts):
        if part and part not in out:
            out.append(part)
    return "\n".join(out)


def select_state(state: dict, query: str, *, limit: int, counter: Any, config: ContextConfig, now: float) -> StateSelection:
    """Choose the session state for one request (see the module doc); `limit`: input budget, tokens."""
    kind = classify_query(query)
    shares = layer_budgets(config.layer_shares, limit, kind, adaptive=config.adaptive_layers)
    out = StateSelection(query=query, query_type=kind)
    out.cands = note_candidates(state.get("notes")) + memory_candidates(state.get("memory"))
    cost = _coster(counter)
    for cand in out.cands:
        cand.cost = cost(cand)
    out.budgets = {"evidence": shares["evidence"], "memory": shares["memory"]}
    _choose(out.cands, query, out.budgets, config, counter, now)
    out.used = {layer: sum(c.cost for c in out.cands if c.layer == layer and c.decision != "dropped")
                for layer in ("evidence", "memory")}
    out.parts = _parts(state, out.cands)
    board = dict(out.parts).get("todos")
    out.budgets["state"] = out.used["state"] = counter.count(board) if board else 0
    picked = [c.packet for c in out.cands if c.layer == "evidence" and c.decision != "dropped"]
    out.summary_state = {**state, "notes": [{"id": p.metadata["id"], "title": p.metadata["note_title"],
                                             "type": p.metadata["note_type"], "content": p.content} for p in picked]}
    return out


def _parts(state: dict, cands: list[Candidate]) -> list[tuple[str, str]]:
    """The non-empty (name, text) parts: memory files, the todo board, the selected notes
    and memories (each rendered in a stable order, see the module doc)."""
    memory_files = dict(state_sections({"memory_files": state.get("memory_files")})).get("memory_files")
    todos = render_todos(state)
    parts = (("memory_files", memory_files), ("todos", f"Todo board:\n{todos}" if todos else ""),
             ("notes", _render(cands, "evidence")), ("memory", _render(cands, "memory")))
    return [(name, text) for name, text in parts if text]


def note_candidates(notes: Any) -> list[Candidate]:
    """One evidence candidate per note ({"id", "title", "type", "content", "created_at",
    "updated_at", "tags"} dicts or strings), in creation order; the newest task_state and
    blocker notes pinned."""
    items = [n if isinstance(n, dict) else {"content": str(n)} for n in _as_list(notes)]
    items = [n for n in items if str(n.get("content") or n.get("summary") or n.get("body") or "").strip()]
    items.sort(key=lambda n: (_stamp(n, "created_at") or 0.0, str(n.get("id") or "")))
    pinned = {kind: max((i for i, n in enumerate(items) if n.get("type") == kind),
                        key=lambda i: (_stamp(items[i]) or 0.0, i), default=None) for kind in PINNED_NOTE_TYPES}
    cands = []
    for i, note in enumerate(items):
        nid, title, kind = str(note.get("id") or f"note{i}"), str(note.get("title") or ""), str(note.get("type") or "")
        label = ", ".join(p for p in (title, kind, f"id {nid}") if p)
        body = str(note.get("content") or note.get("summary") or note.get("body")).strip()
        packet = ContextPacket(body, timestamp=_stamp(note), metadata={
            "type": "note", "id": nid, "title": label, "note_title": title, "note_type": kind, "source": "notes"})
        cands.append(_cand(packet, f"note:{nid}", "evidence", i, pinned=i in pinned.values()))
    return cands


def memory_candidates(hits: Any) -> list[Candidate]:
    """One memory-layer candidate per memory hit ({"id", "content"|"text", "memory_type",
    "importance", "timestamp"} dicts or strings), in time order."""
    items = [h if isinstance(h, dict) else {"content": str(h)} for h in _as_list(hits)]
    items = [h for h in items if str(h.get("content") or h.get("text") or "").strip()]
    items.sort(key=lambda h: (_stamp(h) or 0.0, str(h.get("id") or "")))
    cands = []
    for i, hit in enumerate(items):
        mid = str(hit.get("id") or f"m{i}")
        importance = _importance(hit.get("importance"))
        meta = {"type": "memory", "id": mid, "source": "memory", "importance": importance}
        if hit.get("memory_type"):
            meta["title"] = str(hit["memory_type"])
        packet = ContextPacket(str(hit.get("content") or hit.get("text")).strip(), timestamp=_stamp(hit), metadata=meta)
        cands.append(_cand(packet, f"memory:{mid}", "memory", i))
    return cands


def rows(selection: StateSelection) -> list[dict]:
    """The snapshot rows of the note and memory candidates (`Candidate.row` plus the
    note's title and type, the memory's importance)."""
    out = []
    for cand in selection.cands:
        row = cand.row()
        meta = cand.packet.metadata
        row.update({k: meta[k] for k in ("note_type", "importance") if k in meta})
        row["title"] = meta.get("note_title", meta.get("title", ""))
        out.append(row)
    return out


def _choose(cands: list[Candidate], query: str, budgets: dict[str, int], config: ContextConfig, counter: Any,
            now: float) -> None:
    """Score `cands` in one BM25 corpus, then select each layer under its own budget (in place)."""
    if not cands:
        return
    score(cands, query, config, now)
    for cand in cands:
        if cand.layer == "memory":
            cand.score *= (0.8 + 0.4 * cand.packet.metadata["importance"]) / 1.2
    cost = _coster(counter)
    truncate = compress.make_truncator(counter, cost, structure.packet_text)
    for layer in ("evidence", "memory"):
        group = [c for c in cands if c.layer == layer]
        if not group:
            continue
        if budgets[layer] <= 0:
            for cand in group:
                cand.decision, cand.reason = "dropped", f"no budget: the {layer} layer has 0 tokens"
            continue
        only = {name: float(name == layer) for name in LAYERS}  # the whole budget is this layer's
        select(group, budgets[layer], replace(config, layer_shares=only, adaptive_layers=False), query,
               truncate=truncate, recount=cost)
        for cand in group:  # the budget select() ran out of is this layer's
            if cand.decision == "dropped" and cand.reason.startswith("over budget:"):
                cand.reason = f"over {layer} layer budget:" + cand.reason.removeprefix("over budget:")
    _drop_cross_duplicates(cands, config.dedup_threshold)
    for cand in cands:
        if cand.pinned and cand.decision != "dropped":
            cand.reason = f"pinned: the newest {cand.packet.metadata['note_type']} note" + (
                ", cut to fit" if cand.decision == "truncated" else "")


def _drop_cross_duplicates(cands: list[Candidate], threshold: float) -> None:
    """Drop a selected memory that near-duplicates a selected note (`select` dedups within a
    layer; notes win across layers, being the task's own record)."""
    notes = [(c, sketch(c.packet.content)) for c in cands if c.layer == "evidence" and c.decision != "dropped"]
    for cand in (c for c in cands if c.layer == "memory" and c.decision != "dropped"):
        mine = sketch(cand.packet.content)
        twin = next(((n, j) for n, theirs in notes if (j := sketch_jaccard(mine, theirs)) >= threshold), None)
        if twin is not None:
            cand.decision, cand.reason = "dropped", f"near-duplicate of {twin[0].id} (Jaccard {twin[1]:.2f})"


def _render(cands: list[Candidate], layer: str) -> str:
    return _SEP.join(c.text for c in sorted(cands, key=lambda c: c.order) if c.layer == layer and c.decision != "dropped")


def _cand(packet: ContextPacket, cid: str, layer: str, order: int, *, pinned: bool = False) -> Candidate:
    return Candidate(id=cid, layer=layer, type=packet.type, text=structure.packet_text(packet), cost=0,
                     timestamp=packet.epoch, packet=packet, order=order, pinned=pinned, source=packet.metadata["source"])


def _coster(counter: Any):
    sep = counter.count(_SEP)

    def cost(cand: Candidate) -> int:
        """Tokens a packet adds to the block: its rendered line and one separator."""
        return counter.count(cand.text) + sep

    return cost


def _as_list(value: Any) -> list:
    if value is None or value == "":
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _stamp(item: dict, *keys: str) -> float | None:
    """Unix seconds of the item's first time field (`keys`, default updated_at, timestamp,
    created_at); None when it has none (the packet then counts as new)."""
    for key in keys or ("updated_at", "timestamp", "created_at"):
        if item.get(key) not in (None, ""):
            return to_epoch(item[key])
    return None


def _importance(value: Any) -> float:
    try:
        return min(1.0, max(0.0, float(value)))
    except (TypeError, ValueError):
        return 0.5
