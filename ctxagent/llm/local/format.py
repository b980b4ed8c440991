"""How the bundled offline model sees a chat with tools, and how its reply is read back.

Pure functions used by `ctxagent.llm.local.handler`: the Hermes / Qwen convention (tools
in the system turn, `prompts/local_tools.md`; calls in `<tool_call>`, results in
`<tool_response>`), with `call_schema` for the grammar (docs/local-model.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ctxagent.templates import prompts

TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"


@dataclass(frozen=True)
class ChatFamily:
    """Turn markers of one chat template family.

    `system_role` None means the template has no system turn (Gemma): the system text
    is put at the top of the first user turn, as Gemma's own template does.
    """

    name: str
    turn_start: str
    turn_end: str
    assistant_role: str
    system_role: str | None
    stop: tuple[str, ...]


FAMILIES: dict[str, ChatFamily] = {
    # ChatML, the template of SmolLM2-Instruct (HuggingFaceTB tokenizer_config.json).
    "chatml": ChatFamily(
        "chatml", "<|im_start|>{role}\n", "<|im_end|>\n", "assistant", "system",
        ("<|im_end|>", "<|im_start|>"),
    ),
    # Gemma 3 (google/gemma-3-270m chat_template): user/model turns only.
    "gemma": ChatFamily(
        "gemma", "<start_of_turn>{role}\n", "<end_of_turn>\n", "model", None,
        ("<end_of_turn>", "<start_of_turn>"),
    ),
}


@dataclass
class ParsedReply:
    """The model's reply read back: text, or one tool call (name, raw JSON arguments)."""

    content: str | None
    tool_calls: list[tuple[str, str]] = field(default_factory=list)


def family(name: str) -> ChatFamily:
    """The ChatFamily called `name`; ValueError naming the valid ones."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise ValueError(f"unknown chat family {name!r}; use one of {sorted(FAMILIES)}") from None


def render_prompt(messages: list[dict], tools: list[dict], fam: ChatFamily, *, answer_now: bool = False) -> str:
    """The full prompt text for `messages` (OpenAI chat dicts), ending with the open
    assistant turn. `tools` are OpenAI tool dicts; [] means no tool instructions.
    After a tool result a reminder restates the user's request (small models lose it);
    `answer_now` makes the reminder ask for the answer (the grammar will require text)."""
    turns = _to_turns(messages, tools, answer_now)
    turns = _merge_roles(turns, fam)
    parts = [fam.turn_start.format(role=role) + text.strip() + "\n" + fam.turn_end for role, text in turns]
    parts.append(fam.turn_start.format(role=fam.assistant_role))
    return "".join(parts)


def _to_turns(messages: list[dict], tools: list[dict], answer_now: bool) -> list[tuple[str, str]]:
    names = _call_names(messages)
    turns: list[tuple[str, str]] = []
    for msg in messages:
        role = msg.get("role")
        if role == "tool":
            name = names.get(msg.get("tool_call_id", ""), "tool")
            body = f'<tool_response name="{name}">\n{_text(msg.get("content"))}\n</tool_response>'
            turns.append(("user", body))
        elif role == "assistant":
            turns.append(("assistant", _assistant_text(msg)))
        elif role in ("system", "developer"):
            turns.append(("system", _text(msg.get("content"))))
        else:
            turns.append(("user", _text(msg.get("content"))))
    if tools:
        _add_tool_instructions(turns, tools, _last_request(messages), answer_now)
    return turns


def _last_request(messages: list[dict]) -> str:
    for msg in reversed(messages):
        if msg.get("role") == "user":
            return " ".join(_text(msg.get("content")).split())
    return ""


def _add_tool_instructions(turns: list[tuple[str, str]], tools: list[dict], task: str, answer_now: bool) -> None:
    views = [_tool_view(t) for t in tools]
    block = render_template("local_tools.md", tools=views, names=[v["name"] for v in views])
    if turns and turns[0][0] == "system":
        turns[0] = ("system", turns[0][1].rstrip() + "\n\n" + block)
    else:
        turns.insert(0, ("system", block))
    if turns[-1][0] == "user" and turns[-1][1].startswith("<tool_response"):
        turns.append(("user", render_template("local_tool_reminder.md", task=task, answer_now=answer_now)))


def _merge_roles(turns: list[tuple[str, str]], fam: ChatFamily) -> list[tuple[str, str]]:
    """Join adjacent turns of one role; fold system turns into users where the family has none."""
    merged: list[tuple[str, str]] = []
    pending_system: list[str] = []
    for role, text in turns:
        if role == "system" and fam.system_role is None:
            pending_system.append(text)
            continue
        if role == "user" and pending_system:
            text = "\n\n".join(pending_system + [text])
            pending_system = []
        role_name = {"assistant": fam.assistant_role, "system": fam.system_role}.get(role, role)
        if merged and merged[-1][0] == role_name:
            merged[-1] = (role_name, merged[-1][1].rstrip() + "\n\n" + text)
        else:
            merged.append((role_name, text))
    if pending_system:
        merged.append(("user", "\n\n".join(pending_system)))
    return merged


def _call_names(messages: list[dict]) -> dict[str, str]:
    names: dict[str, str] = {}
    for msg in messages:
        for call in msg.get("tool_calls") or []:
            names[call.get("id", "")] = call.get("function", {}).get("name", "tool")
    return names


def _assistant_text(msg: dict) -> str:
    parts = [_text(msg.get("content"))] if msg.get("content") else []
    for call in msg.get("tool_calls") or []:
        fn = call.get("function", {})
        parts.append(format_call(fn.get("name", ""), fn.get("arguments") or "{}"))
    return "\n".join(parts)


def format_call(name: str, arguments: str) -> str:
    """One tool call as the model writes it. `arguments` is the raw JSON string."""
    try:
        args: Any = json.loads(arguments)
    except json.JSONDecodeError:
        args = arguments
    body = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
    return f"{TOOL_CALL_OPEN}\n{body}\n{TOOL_CALL_CLOSE}"


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _tool_view(tool: dict) -> dict[str, str]:
    fn = tool.get("function", tool)
    return {"name": fn["name"], "description": first_sentence(fn.get("description") or ""),
            "arguments": describe_parameters(fn.get("parameters") or {})}


def first_sentence(text: str, max_chars: int = 300) -> str:
    """The first sentence of `text` on one line, at most `max_chars` characters.

    A small model's prompt is short on room and attention: the system prompt already
    explains each tool; the list only has to say what each one is for.
    """
    flat = " ".join(text.split())
    for end in (". ", ".\n"):
        cut = flat.find(end)
        if cut != -1:
            flat = flat[: cut + 1]
            break
    return flat if len(flat) <= max_chars else flat[: max_chars - 3].rstrip() + "..."


def describe_parameters(schema: dict) -> str:
    """A compact one-line description of a JSON-Schema object, for a small model's prompt.

    {"properties": {"command": {"type": "string", "description": "Run it."}},
     "required": ["command"]} -> 'command (string, required): Run it.'
    """
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    if not props:
        return "none"
    items = []
    for name, prop in props.items():
        kind = "required" if name in required else "optional"
        desc = " ".join((prop.get("description") or "").split())
        items.append(f"{name} ({_type_name(prop)}, {kind})" + (f": {desc}" if desc else ""))
    return "; ".join(items)


def _type_name(prop: dict) -> str:
    if "enum" in prop:
        return "one of " + "|".join(json.dumps(v) for v in prop["enum"])
    if "anyOf" in prop:
        return " or ".join(_type_name(p) for p in prop["anyOf"] if p.get("type") != "null")
    if "$ref" in prop:
        return "object"
    kind = prop.get("type", "any")
    if kind == "array":
        return f"array of {_type_name(prop.get('items') or {})}"
    return kind if isinstance(kind, str) else "|".join(kind)


def render_template(name: str, /, **values: Any) -> str:
    """Render prompt file `ctxagent/llm/local/prompts/<name>` (e.g. "local_tools.md"; stripped)."""
    return prompts("ctxagent.llm.local", trim_blocks=True).render(name.removesuffix(".md"), **values)
