"""Structure: selected packets -> the sectioned text, or OpenAI chat messages.

Every packet type has a section ([Role & Policies], [Task], [State], [Evidence],
[Context]; unknown types go to [Context]), so nothing selected vanishes. Templates:
`prompts/context_sections.md` and `prompts/context_block.md` (docs/context.md).
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from ctxagent.context.packet import ContextPacket
from ctxagent.templates import prompts
from ctxagent.text.terms import has_cjk

SECTIONS = ("Role & Policies", "Task", "State", "Evidence", "Context", "Output")
_TYPE_SECTION = {
    **dict.fromkeys(("instructions", "system", "system_instruction", "policy"), "Role & Policies"),
    **dict.fromkeys(("task", "current"), "Task"),
    **dict.fromkeys(("state", "task_state", "todo", "plan", "note"), "State"),
    **dict.fromkeys(
        ("rag", "rag_result", "evidence", "knowledge", "code_structure", "git_history", "file", "tool_result"),
        "Evidence",
    ),
}
#: Line prefixes that tell the model what a packet is (rag/evidence items need none).
LABELS = {
    "memory": "Memory", "note": "Note", "todo": "Todo", "plan": "Plan", "state": "State", "task_state": "State",
    "git_history": "Git", "code_structure": "Code structure", "file": "File", "tool_result": "Tool result",
}
SEPARATORS = {"Evidence": "\n---\n"}
_PROMPTS = prompts("ctxagent.context")


def section_of(packet_type: str) -> str:
    """The section a packet type is rendered in ("Context" for unknown types)."""
    return _TYPE_SECTION.get(packet_type, "Context")


def separator(section: str) -> str:
    """What joins the items of `section`."""
    return SEPARATORS.get(section, "\n")


def packet_text(packet: ContextPacket, kind: str | None = None) -> str:
    """One packet as it appears in its section: `Label (title): content`. `kind`: the
    packet's type when the caller has it already (default `packet.type`)."""
    meta = packet.metadata
    label = LABELS.get(packet.type if kind is None else kind, "")
    where = meta.get("title") or meta.get("path") or ""
    if label and where:
        return f"{label} ({where}): {packet.content}"
    if label:
        return f"{label}: {packet.content}"
    return f"({where}) {packet.content}" if where else packet.content


def message_text(message: dict) -> str:
    """One chat message as a text line (`role: content`; tool calls and results spelled out)."""
    role = message.get("role", "user")
    content = _content_str(message.get("content"))
    if role == "tool":
        return f"tool ({message.get('tool_call_id', '?')}): {content}"
    lines = [f"{role}: {content}"] if content else []
    for call in message.get("tool_calls") or []:
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        lines.append(f"{role} -> {fn.get('name', '?')}({fn.get('arguments', '')})")
    return "\n".join(lines) or f"{role}:"


def unit_text(unit: Iterable[dict]) -> str:
    """A history unit (a message, or a call with its results) as text lines."""
    return "\n".join(message_text(m) for m in unit)


def _content_str(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) and p.get("type") == "text" else json.dumps(p) for p in content]
        return "\n".join(parts)
    return str(content)


def render_text(sections: dict[str, list[str]], task: str, output: str | None = None) -> str:
    """The sectioned context (all six sections, empty ones with a placeholder).

    `sections` maps section names to their items (strings), in order.
    """
    body = {name: separator(name).join(items) for name, items in sections.items()}
    return _PROMPTS.render(
        "context_sections",
        role="\n\n".join(sections.get("Role & Policies", [])),
        task=task,
        state=body.get("State", ""),
        evidence=body.get("Evidence", ""),
        context=body.get("Context", ""),
        output=output,
        cjk=has_cjk(task),
    )


def render_block(sections: dict[str, list[str]], task: str) -> str:
    """The request with its context: non-empty State/Evidence/Context sections, then
    `[Task]` and the request. With no sections, the request itself, unchanged."""
    pairs = [(name, separator(name).join(sections[name])) for name in ("State", "Evidence", "Context") if sections.get(name)]
    if not pairs:
        return task
    return _PROMPTS.render("context_block", sections=pairs, task=task)


def group_sections(packets: Iterable[ContextPacket]) -> dict[str, list[str]]:
    """Packets grouped by section, rendered with `packet_text`, in the given order."""
    out: dict[str, list[str]] = {name: [] for name in SECTIONS}
    for packet in packets:
        section = section_of(packet.type)
        out[section].append(packet.content if section in ("Role & Policies", "Task") else packet_text(packet))
    return out
