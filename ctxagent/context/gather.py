"""Gather: collect candidate packets and the history from every source.

Sources follow the textbook's tool conventions (chapter 9, section 9.3.3): memory and rag
tools answer `{"action": "search", ...}` with lists, dicts or text; a source that raises
is recorded in the report and skipped (docs/context.md, "How selection works").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from ctxagent.context.messages import normalize, repair_pairing, truncate_tool_result
from ctxagent.context.packet import ContextPacket, to_epoch

_LIST_KEYS = ("results", "items", "memories", "documents", "hits", "data", "notes", "chunks")
_TEXT_KEYS = ("content", "text", "memory", "page_content", "document", "chunk", "body")
_META_KEYS = ("id", "title", "path", "source", "memory_type", "importance", "score", "type", "note_type", "tags")
_TIME_KEYS = ("timestamp", "updated_at", "created_at", "time")
_ITEM_LINE = re.compile(r"^\s*(?:\d+[.)、]|[-*•])\s+")
_HEADER_LINE = re.compile(r"^[^\n]{0,60}[:：]\s*$")


@dataclass
class Gathered:
    """What the gather stage found: packets, the history (dicts, pairing-valid, tool
    results cut), and per-source status {name: {"ok", "items" | "error"}}."""

    packets: list[ContextPacket] = field(default_factory=list)
    history: list[dict] = field(default_factory=list)
    sources: dict[str, dict] = field(default_factory=dict)


def gather(
    user_query: str,
    conversation_history: Iterable[Any] | None = None,
    system_instructions: str | list[str] | None = None,
    custom_packets: Iterable[ContextPacket] | None = None,
    *,
    memory_tool: Any = None,
    rag_tool: Any = None,
    memory_limit: int = 10,
    rag_limit: int = 5,
    min_importance: float = 0.3,
    tool_result_max_chars: int = 20_000,
) -> Gathered:
    """Run the gather stage. System messages found in the history become instruction
    packets; tool results longer than `tool_result_max_chars` are cut (case C05)."""
    out = Gathered()
    for text in [system_instructions] if isinstance(system_instructions, str) else system_instructions or []:
        if text:
            out.packets.append(ContextPacket(text, metadata={"type": "instructions", "source": "system_instructions"}))
    history = []
    for msg in normalize(conversation_history):
        if msg.get("role") in ("system", "developer") and isinstance(msg.get("content"), str):
            out.packets.append(ContextPacket(msg["content"], metadata={"type": "instructions", "source": "history"}))
        else:
            history.append(_cut_tool_result(msg, tool_result_max_chars))
    out.history = repair_pairing(history)
    if memory_tool is not None and user_query:
        args = {"action": "search", "query": user_query, "limit": memory_limit, "min_importance": min_importance}
        _from_source(out, "memory_tool", memory_tool, args, "memory")
    if rag_tool is not None and user_query:
        _from_source(out, "rag_tool", rag_tool, {"action": "search", "query": user_query, "limit": rag_limit}, "rag")
    for packet in custom_packets or []:
        if not isinstance(packet, ContextPacket):
            raise ValueError(f"custom_packets must hold ContextPacket objects, got {type(packet).__name__}")
        out.packets.append(packet)
    return out


def _cut_tool_result(msg: dict, max_chars: int) -> dict:
    content = msg.get("content")
    if msg.get("role") == "tool" and isinstance(content, str) and len(content) > max_chars:
        return {**msg, "content": truncate_tool_result(content, max_chars)}
    return msg


def _from_source(out: Gathered, name: str, tool: Any, args: dict, packet_type: str) -> None:
    try:
        result = tool.run(args)
        packets = parse_results(result, packet_type=packet_type, source=name)
    except Exception as exc:  # a failing source is reported and skipped, by design
        out.sources[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
        return
    out.packets.extend(packets)
    out.sources[name] = {"ok": True, "items": len(packets)}


def parse_results(result: Any, *, packet_type: str, source: str) -> list[ContextPacket]:
    """Packets from a memory/retrieval answer of any of the accepted shapes (see module doc)."""
    if result is None:
        return []
    if isinstance(result, str):
        return [_packet(text, {}, packet_type, source) for text in split_text_results(result)]
    if isinstance(result, dict):
        for key in _LIST_KEYS:
            if isinstance(result.get(key), list):
                return parse_results(result[key], packet_type=packet_type, source=source)
        result = [result]
    packets = []
    for item in result if isinstance(result, (list, tuple)) else [result]:
        text, meta = _item_fields(item)
        if text and text.strip():
            packets.append(_packet(text.strip(), meta, packet_type, source))
    return packets


def split_text_results(text: str) -> list[str]:
    """Items of a text answer: numbered/bulleted lines if any, else blank-line paragraphs.
    Header lines ending in a colon ("Found 3 memories:") are skipped."""
    lines = [line for line in text.splitlines() if line.strip()]
    items = [_ITEM_LINE.sub("", line).strip() for line in lines if _ITEM_LINE.match(line)]
    if items:
        return items
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    return [p for p in paragraphs if not _HEADER_LINE.match(p)]


def _item_fields(item: Any) -> tuple[str, dict]:
    if isinstance(item, str):
        return item, {}
    get = item.get if isinstance(item, dict) else (lambda key, default=None: getattr(item, key, default))
    text = next((str(get(k)) for k in _TEXT_KEYS if get(k) not in (None, "")), "")
    if not text and isinstance(item, dict):
        text = str(item)
    meta = {k: get(k) for k in _META_KEYS if get(k) is not None}
    stamp = next((get(k) for k in _TIME_KEYS if get(k) is not None), None)
    if stamp is not None:
        meta["timestamp"] = stamp
    return text, meta


def _packet(text: str, meta: dict, packet_type: str, source: str) -> ContextPacket:
    stamp = meta.pop("timestamp", None)
    metadata = {k: v for k, v in meta.items() if k not in ("type", "score", "source")}
    if "source" in meta:
        metadata["origin"] = meta["source"]
    if "score" in meta:
        metadata["source_score"] = meta["score"]
    if meta.get("type") and meta.get("type") != packet_type:
        metadata["item_type"] = meta["type"]
    metadata.update({"type": packet_type, "source": source})
    return ContextPacket(text, timestamp=to_epoch(stamp) if stamp is not None else None, metadata=metadata)


@dataclass
class RepoSources:
    """What a repository offers the builder: instructions (AGENTS.md), state packets
    (todo board, notes), a memory tool if one exists, and each source's status."""

    instructions: list[str] = field(default_factory=list)
    packets: list[ContextPacket] = field(default_factory=list)
    memory_tool: Any = None
    sources: dict[str, dict] = field(default_factory=dict)


def repo_sources(repo: Any, query: str, memory_tool: Callable[[Any], Any] | None = None) -> RepoSources:
    """Collect `repo`'s context sources for `ctxagent context` (no model involved).
    `memory_tool(repo)` opens the memory source (the CLI passes `MemoryTool.for_repo`).

    Each source is optional: one whose module is missing is reported as "not
    available", one that fails as its error; the others still count.
    """
    from pathlib import Path

    repo = Path(repo)
    out = RepoSources()
    _try_source(out, "agents_md", lambda: _agents_md(repo, out))
    _try_source(out, "session_state", lambda: _session_state(repo, query, out))
    if memory_tool is not None:
        _try_source(out, "memory_tool", lambda: _memory_tool(memory_tool, repo, out))
    return out


def _try_source(out: RepoSources, name: str, load: Any) -> None:
    try:
        out.sources[name] = {"ok": True, "items": load()}
    except ImportError as exc:
        out.sources[name] = {"ok": False, "error": f"not available ({exc})"}
    except Exception as exc:  # reported, never fatal: the context can be built without it
        out.sources[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}


def _agents_md(repo: Any, out: RepoSources) -> int:
    from ctxagent.context.instructions import read_agents_md

    text = read_agents_md(repo)
    if text:
        out.instructions.append(text)
    return int(bool(text))


def _session_state(repo: Any, query: str, out: RepoSources) -> int:
    from ctxagent.context.state.read import gather_state

    state, problems = gather_state(repo, query)
    todos = [f"[{t.get('status', '?')}] {t.get('content') or t.get('title') or t.get('text', '')}" for t in state.get("todos", [])]
    if todos:
        out.packets.append(ContextPacket("\n".join(todos), metadata={"type": "todo", "source": "todos.json", "id": "todos"}))
    for note in state.get("notes", []):
        meta = {"type": "note", "source": "notes", "id": note.get("id"), "title": note.get("title")}
        out.packets.append(ContextPacket(str(note.get("content", "")), metadata=meta))
    if problems:
        raise RuntimeError("; ".join(problems))
    return (1 if todos else 0) + len(state.get("notes", []))


def _memory_tool(open_tool: Callable[[Any], Any], repo: Any, out: RepoSources) -> int:
    out.memory_tool = open_tool(repo)
    return 1
