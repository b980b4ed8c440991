"""The structured session state the assembler re-injects into every request.

Renders the `state` dict given to `ContextAssembler.assemble`: `memory_files`, `todos`,
`notes`, `memory`, `turn_id`, `query` (all optional, unknown keys ignored). The same
state feeds the compaction summary. Key shapes: docs/compaction.md ("Module notes").
"""

from __future__ import annotations

from typing import Any

#: Todo statuses counted as done / in progress; anything else is pending.
DONE = {"done", "completed", "complete", "finished", "closed"}
ACTIVE = {"in_progress", "in-progress", "doing", "active", "started", "working"}


def _text_of(item: Any, keys: tuple[str, ...]) -> str:
    if isinstance(item, str):
        return item.strip()
    if isinstance(item, dict):
        for key in keys:
            value = item.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return str(item).strip()


def todo_items(state: dict | None) -> list[tuple[str, str]]:
    """(status, title) pairs of the todo board; status normalised to done/active/pending."""
    board = (state or {}).get("todos")
    if isinstance(board, dict):
        board = board.get("items") or board.get("todos") or []
    if not isinstance(board, list):
        return []
    out = []
    for item in board:
        raw = str(item.get("status", "pending")).lower() if isinstance(item, dict) else "pending"
        status = "done" if raw in DONE else "active" if raw in ACTIVE else "pending"
        title = _text_of(item, ("title", "content", "text", "task", "description"))
        if title:
            out.append((status, title))
    return out


def render_todos(state: dict | None) -> str:
    """The todo board as lines (`- [x] done`, `- [~] in progress`, `- [ ] pending`), or a
    board given as text unchanged; "" when there is none."""
    state = state or {}
    board = state.get("todos")
    if isinstance(board, str):
        return board.strip()
    marks = {"done": "[x]", "active": "[~]", "pending": "[ ]"}
    return "\n".join(f"- {marks[status]} {title}" for status, title in todo_items(state))


def _render_list(value: Any, keys: tuple[str, ...], title_key: str | None = None) -> str:
    if isinstance(value, str):
        return value.strip()
    if not isinstance(value, list):
        return ""
    lines = []
    for item in value:
        body = _text_of(item, keys)
        title = item.get(title_key) if (title_key and isinstance(item, dict)) else None
        if body:
            lines.append(f"- {title}: {body}" if title and title != body else f"- {body}")
    return "\n".join(lines)


def _render_memory_files(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if not isinstance(value, list):
        return ""
    parts = []
    for item in value:
        if isinstance(item, dict):
            parts.append(f"### {item.get('path', 'memory file')}\n{_text_of(item, ('content', 'text'))}")
        elif str(item).strip():
            parts.append(str(item).strip())
    return "\n\n".join(parts)


def state_sections(state: dict | None) -> list[tuple[str, str]]:
    """(layer name, rendered text) for each non-empty part of `state`, in injection order.

    Layer names: "memory_files", "todos", "notes", "memory". The order puts what changes
    least first (memory files), so a server-side prompt cache keeps more of the prefix.
    """
    state = state or {}
    parts = [
        ("memory_files", "Project memory", _render_memory_files(state.get("memory_files"))),
        ("todos", "Todo board", render_todos(state)),
        ("notes", "Notes", _render_list(state.get("notes"), ("content", "summary", "body", "text"), "title")),
        ("memory", "Relevant memories", _render_list(state.get("memory"), ("content", "text"))),
    ]
    return [(name, f"## {title}\n{text}") for name, title, text in parts if text]
