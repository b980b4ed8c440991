"""The assembler's per-call report (`ctxagent.context.record.snapshot` writes it with the request).

The shape of `ContextBuilder.build_messages`'s report: "budget", "layers" (tokens) and
one "packets" row per candidate with its decision and reason (`masked:`, `cut:`,
`compacted:`, `trimmed:`); plus "compaction", "fit_actions", "problems". Layer figures:
docs/context.md ("Reading the layer chart", "Module notes").
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ctxagent.context.compaction.masking import is_masked
from ctxagent.context.compaction.sections import is_summary_message
from ctxagent.context.state import select as stateselect
from ctxagent.redaction import redact

_PREVIEW_CHARS = 200


def message_preview(message: dict) -> str:
    """A history message's report preview: its text (a tool call's name and arguments
    too), whitespace folded, at most 200 characters (`ctxagent inspect --grep` matches
    transcript messages to report rows by it); redacted BEFORE folding, since a private key
    with its line breaks folded into spaces is no longer a block redaction can find."""
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    if message.get("tool_calls"):  # the arguments too: `inspect --grep utils.py` finds the call that read it
        calls = "; ".join(f"{c.get('function', {}).get('name', '?')} {c.get('function', {}).get('arguments', '')}"
                          for c in message["tool_calls"] if isinstance(c, dict))
        text = f"{text} [calls {calls}]" if text else f"calls {calls}"
    return " ".join(redact(text[:_PREVIEW_CHARS * 8])[:_PREVIEW_CHARS].split())


def _row(pid: str, layer: str, kind: str, source: str, tokens: int, decision: str, reason: str, preview: str,
         pinned: bool = False) -> dict:
    return {"id": pid, "layer": layer, "type": kind, "source": source, "tokens": tokens, "relevance": None,
            "recency": None, "score": None, "pinned": pinned, "decision": decision, "reason": reason,
            "preview": preview}


def _decision(h: int, message: dict, sent: dict | None, trimmed: set, cut: set) -> tuple[str, str]:
    if sent is None:
        if h in trimmed:
            return "dropped", "trimmed: did not fit the input budget"
        return "dropped", "compacted: replaced by a compaction summary"
    if is_masked(sent) and not is_masked(message):
        return "truncated", "masked: old tool result replaced by a one-line placeholder"
    if h in cut:
        return "truncated", "cut: tool result longer than its share of the budget (head and tail kept)"
    return "selected", "kept verbatim"


def _history_rows(convo, origins, fit, cut, counter, n_system) -> list[dict]:
    final = {origins[v]: fit.convo[k] for k, v in enumerate(fit.origins) if origins[v] is not None}
    trimmed = {origins[v] for v in fit.trimmed if origins[v] is not None}
    users = [h for h, m in enumerate(convo) if m.get("role") == "user" and not is_summary_message(m)]
    rows = []
    for h, message in enumerate(convo):
        decision, reason = _decision(h, message, final.get(h), trimmed, cut)
        layer = "tool_results" if message.get("role") == "tool" else "history"
        kind = str(message.get("role"))
        if is_summary_message(message):  # a summary the loop kept as history (after /compact)
            kind, reason = "summary", ("compaction summary" if decision == "selected" else reason)
        sent = final.get(h)  # a cut or masked message counts what was sent; a dropped one what it would have cost
        rows.append(_row(f"msg{n_system + h}", layer, kind, "history",
                         counter.count_message(message if sent is None else sent), decision, reason, message_preview(message),
                         pinned=bool(users) and h == users[0]))
    for k, v in enumerate(fit.origins):
        if origins[v] is None:  # a summary message made by a compaction
            message = fit.convo[k]
            rows.append(_row(f"summary{k}", "history", "summary", "compaction", counter.count_message(message),
                             "selected", "compaction summary", message_preview(message)))
    return rows


#: Report layer and fixed reason of the session-state parts that are not selected against.
_FIXED_PARTS = {"memory_files": ("system", "project memory: appended to the system message every call"),
                "todos": ("state", "state layer: the todo board, in the [State] block after the newest message "
                                     "(the last block sent stays where it was until the board changes)")}
_TRIMMED = "trimmed: did not fit the input budget"


def _state_rows(selection: Any, kept_parts: list[tuple[str, str]], counter: Any) -> list[dict]:
    """Rows for the todo board / memory files (fixed) and every note and memory candidate;
    a part the fit step left out turns its selected packets into "dropped" rows."""
    kept = {name for name, _ in kept_parts}
    out = []
    for name, text in selection.parts:
        if name in _FIXED_PARTS:
            layer, reason = _FIXED_PARTS[name]
            row = _row(f"state:{name}", layer, name, "session state", counter.count(text),
                       "selected" if name in kept else "dropped", reason if name in kept else _TRIMMED,
                       " ".join(text[:_PREVIEW_CHARS].split()), pinned=True)
            out.append({**row, "relevance": 1.0, "recency": 1.0, "score": 1.0})
    part_of = {"evidence": "notes", "memory": "memory"}
    for row in stateselect.rows(selection):
        if row["decision"] != "dropped" and part_of[row["layer"]] not in kept:
            row["decision"], row["reason"] = "dropped", f"{_TRIMMED}: the {row['layer']} layer was left out"
        out.append(row)
    return out


def _layers(selection: Any, fit: Any, system: list[dict], tools_tokens: int, limit: int,
            counter: Any) -> dict[str, dict]:
    """{layer: {"budget", "used", "fixed"[, "shared_with"]}} in tokens (see the module doc);
    `limit`: the input budget."""
    kept = {name for name, _ in fit.state}
    offered = {name: counter.count(text) for name, text in selection.parts}
    memory_files = offered.get("memory_files", 0)
    system_tokens = sum(counter.count_message(m) for m in system) + memory_files
    board = offered.get("todos", 0)
    layers = {"system": fixed_layer(system_tokens, system_tokens - (0 if "memory_files" in kept else memory_files)),
              "tools": fixed_layer(tools_tokens), "state": fixed_layer(board, board if "todos" in kept else 0)}
    for layer, part in (("evidence", "notes"), ("memory", "memory")):
        used = selection.used.get(layer, 0) if part in kept else 0
        layers[layer] = {"budget": selection.budgets.get(layer, 0), "used": used, "fixed": False}
    history = sum(counter.count_message(m) for m in fit.convo if m.get("role") != "tool")
    results = sum(counter.count_message(m) for m in fit.convo if m.get("role") == "tool")
    layers["framing"] = fixed_layer(fit.tokens - history - results - sum(e["used"] for e in layers.values()))
    room = max(0, limit - sum(e["budget"] for e in layers.values()))  # 0 only if the shares overcommit the budget
    layers["history"] = {"budget": room, "used": history, "fixed": False, "shared_with": "tool_results"}
    layers["tool_results"] = {"budget": room, "used": results, "fixed": False, "shared_with": "history"}
    return layers


def fixed_layer(size: int, used: int | None = None) -> dict:
    """The figures of a required part: `size` tokens set aside for it (its budget) and
    `used` tokens as sent (default: `size`), marked "fixed"."""
    return {"budget": size, "used": size if used is None else used, "fixed": True}


#: The order of the chart's rows: the request's order, the framing last.
LAYER_ORDER = ("system", "tools", "state", "memory", "evidence", "history", "tool_results", "current", "framing")


def layer_rows(layers: dict[str, dict]) -> list[tuple[str, dict]]:
    """A report's layers as chart rows (name, figures), in LAYER_ORDER then any others:
    two layers that share one budget (`shared_with`) make one row, "a + b", their used
    tokens added. Old snapshots' layers (no "fixed", no "shared_with") come back as they are."""
    names = [*(n for n in LAYER_ORDER if n in layers), *(n for n in layers if n not in LAYER_ORDER)]
    rows: list[tuple[str, dict]] = []
    done: set[str] = set()
    for name in names:
        if name in done:
            continue
        done.add(name)
        entry, partner = dict(layers[name]), layers[name].get("shared_with")
        if partner in layers and partner not in done:
            done.add(partner)
            entry["used"] = int(entry.get("used", 0)) + int(layers[partner].get("used", 0))
            name = f"{name} + {partner}"
        rows.append((name, entry))
    return rows


def unused_note(layers: dict[str, dict], why: str) -> str:
    """How the unused room was left: the layers under their budget (by how many tokens),
    those over it (they took room others left), then `why` nothing else filled it."""
    under, over = [], []
    for name, entry in layer_rows(layers):
        gap = int(entry.get("budget", 0)) - int(entry.get("used", 0))
        if not entry.get("fixed") and gap:
            (under if gap > 0 else over).append(f"{name} {abs(gap):,}")
    parts = [f"left by layers under their budget: {', '.join(under)}" if under else "",
             f"taken from it by layers over their budget: {', '.join(over)}" if over else "", why]
    return "; ".join(p for p in parts if p)


def _unused_why(fit: Any, selection: Any, rows: list[dict], overcommit: int) -> str:
    """Why nothing else filled the unused room of the loop's request: what was left out or
    shortened, and by which step (the rows' reasons name it); `overcommit`: tokens by which
    the notes and memory budgets exceed the room beside the fixed parts (0 if they do not)."""
    short = sum(1 for r in rows if r["layer"] in ("evidence", "memory") and r["reason"].startswith("over "))
    steps = Counter(r["reason"].split(":")[0] for r in rows if r["id"].startswith("msg") and r["decision"] != "selected")
    gone = [name for name, _ in selection.parts if name not in {n for n, _ in fit.state}]
    said = [f"the evidence and memory budgets exceed the room beside the fixed parts by {overcommit:,} tokens, so "
            "the history has no budget of its own" if overcommit > 0 else "",
            f"{short} note(s) or memories did not fit their layer's budget, which never takes room other layers "
            "leave" if short else "", *(f"{n} history message(s) {step}" for step, n in steps.items()),
            f"the fit step left out the {', '.join(gone)} layer(s)" if gone else ""]
    return "; ".join(s for s in said if s) or "nothing was left out or shortened"


def build_report(*, call: int, state: dict, budget: dict, system: list[dict], selection: Any,
                 fit: Any, tools: list[dict] | None, counter: Any, origins: list, convo: list[dict],
                 cut: set[int], record: Any, problems: list[str], n_system: int) -> dict[str, Any]:
    """The JSON-ready report of one assembled request (see the module doc).

    `selection`: the `stateselect.StateSelection` of this call; `origins`: conversation
    index of each message of the (compacted) view, None for a summary; `cut`:
    conversation indexes of tool results cut to their share of the budget.
    """
    tools_tokens = counter.count_tools(tools)
    packets = _state_rows(selection, fit.state, counter) + _history_rows(convo, origins, fit, cut, counter, n_system)
    layers = _layers(selection, fit, system, tools_tokens, budget["limit"], counter)
    overcommit = sum(e["budget"] for name, e in layers.items() if name != "tool_results") - budget["limit"]  # room once
    sources = {name: {"ok": True} for name, _ in selection.parts}
    sources.update({f"problem{i}": {"ok": False, "error": text} for i, text in enumerate(problems, 1)})
    return {
        "version": 1, "mode": "assembler", "model": counter.model, "exact": counter.exact,
        "query": selection.query[:500], "query_type": selection.query_type, "call": call,
        "session_id": state.get("session_id"), "turn": state.get("turn"),
        "budget": {"max_tokens": budget["context_window"], "reserve_tokens": budget["max_output_tokens"],
                   "input_budget": budget["limit"], "trigger_tokens": budget["trigger"],
                   "target_tokens": budget["target"], "tools_tokens": tools_tokens, "used_tokens": fit.tokens,
                   "unused_tokens": budget["limit"] - fit.tokens,
                   "unused_note": unused_note(layers, _unused_why(fit, selection, packets, overcommit))},
        "layers": layers,
        "sources": sources,
        "packets": packets,
        "final_fit_dropped": [p["id"] for p in packets if p["reason"].startswith("trimmed")],
        "messages": {"history": n_system + len(convo), "sent": len(fit.messages)},
        "fit_actions": fit.actions,
        "compaction": record.to_dict() if record is not None else None,
        "problems": problems,
    }
