"""Tool calls of the offline model: the GBNF grammar that constrains them and the parser that reads them back.

A reply is either one `<tool_call>` whose JSON matches `call_schema(tools)` (llama.cpp's
JSON-Schema converter) or text without "<t"; `tool_choice` narrows the grammar. Only
`grammar_text` needs llama_cpp (docs/local-model.md, "How it works").
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ctxagent.llm.local.format import TOOL_CALL_CLOSE, TOOL_CALL_OPEN, ParsedReply

_TEXT_RULE = r'text ::= [^<\x00-\x20] ([^<\x00] | "<" [^t\x00])*'
STRING_MAX_CHARS = 256
"""maxLength given to string arguments whose schema sets none: without a bound a 135M
model can run away inside a string ("test-test-test-...") until max_tokens."""


def call_schema(tools: list[dict], only: str | None = None) -> dict:
    """JSON Schema of one call `{"name": <tool>, "arguments": {...}}` over `tools`.

    Each tool's `$defs` are hoisted to the root as `<tool>__<name>` (refs rewritten); objects that do not say
    otherwise get `additionalProperties: false`, unbounded strings `maxLength: STRING_MAX_CHARS`.
    `only`: keep just that tool. Raises ValueError when `only` names no tool in `tools`.
    """
    defs: dict[str, Any] = {}
    branches = []
    for tool in tools:
        fn = tool.get("function", tool)
        if only is not None and fn["name"] != only:
            continue
        params = copy.deepcopy(fn.get("parameters") or {"type": "object", "properties": {}})
        params = _hoist_defs(params, fn["name"], defs)
        branches.append({
            "type": "object",
            "properties": {"name": {"const": fn["name"]}, "arguments": params},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        })
    if not branches:
        raise ValueError(f"tool_choice names {only!r}, which is not among the tools")
    schema: dict[str, Any] = branches[0] if len(branches) == 1 else {"anyOf": branches}
    if defs:
        schema = {**schema, "$defs": defs}
    return schema


def _hoist_defs(params: dict, tool: str, defs: dict[str, Any]) -> dict:
    local = params.pop("$defs", None) or params.pop("definitions", None) or {}
    for name, sub in local.items():
        defs[f"{tool}__{name}"] = _close_objects(_rewrite_refs(sub, tool))
    return _close_objects(_rewrite_refs(params, tool))


def _rewrite_refs(node: Any, tool: str) -> Any:
    if isinstance(node, dict):
        out = {k: _rewrite_refs(v, tool) for k, v in node.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
            out["$ref"] = f"#/$defs/{tool}__{ref.rsplit('/', 1)[1]}"
        return out
    if isinstance(node, list):
        return [_rewrite_refs(v, tool) for v in node]
    return node


_BOUND_KEYWORDS = frozenset({"maxLength", "minLength", "maxItems", "minItems", "maximum", "minimum",
                             "exclusiveMaximum", "exclusiveMinimum", "pattern", "format", "multipleOf"})
"""Validation-only keywords dropped from the grammar's schema: llama.cpp compiles them into
literal repetitions and digit-range rules, and its grammar parser then refuses the whole
grammar ("number of rules that are going to be repeated multiplied by the new repetition
exceeds sane defaults"; seen here with the agent's context_fetch/note/memory schemas).
The tools still validate their arguments when they run."""


def _close_objects(schema: Any) -> Any:
    """A copy of `schema` without bound keywords, objects closed, free strings bounded.

    Walks only the places that hold schemas (properties, items, anyOf...), so a field
    that happens to be called "pattern" or "format" is kept."""
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k not in _BOUND_KEYWORDS}
    if isinstance(out.get("properties"), dict):
        out["properties"] = {name: _close_objects(sub) for name, sub in out["properties"].items()}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(out.get(key), dict):
            out[key] = _close_objects(out[key])
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(out.get(key), list):
            out[key] = [_close_objects(sub) for sub in out[key]]
    if out.get("type") == "object" and "properties" in out:
        out.setdefault("additionalProperties", False)
    if out.get("type") == "string" and STRING_MAX_CHARS and not {"enum", "const"} & out.keys():
        out["maxLength"] = STRING_MAX_CHARS
    return out


def grammar_text(tools: list[dict], tool_choice: Any = "auto") -> str:
    """GBNF text for a reply to a request with `tools` and `tool_choice`.

    tool_choice: "auto" (call or text), "required" (a call), "none" (text), or
    {"type": "function", "function": {"name": N}} (a call of N).
    Raises ValueError for a tool_choice naming an unknown tool.
    """
    from llama_cpp.llama_grammar import SchemaConverter

    if tool_choice == "none":
        return "root ::= text\n" + _TEXT_RULE + "\n"
    only = tool_choice["function"]["name"] if isinstance(tool_choice, dict) else None
    schema = call_schema(tools, only=only)
    conv = SchemaConverter(prop_order={"name": 0, "arguments": 1}, allow_fetch=False, dotall=False, raw_pattern=False)
    schema = conv.resolve_refs(schema, "tools")
    json_rule = conv.visit(schema, "call-json")
    open_lit, close_lit = json.dumps(TOOL_CALL_OPEN + "\n"), json.dumps("\n" + TOOL_CALL_CLOSE)
    rules = [conv.format_grammar(), f"call ::= {open_lit} {json_rule} {close_lit}"]
    if only is None and tool_choice != "required":
        rules += ["root ::= call | text", _TEXT_RULE]
    else:
        rules.append("root ::= call")
    return "\n".join(rules) + "\n"


def parse_reply(text: str) -> ParsedReply:
    """Read a reply back: one tool call (name, arguments as compact JSON) or text.

    A reply that opens a call but does not hold a complete, valid one (cut by
    max_tokens) comes back as text, so the caller can see what was produced.
    """
    body = text.strip()
    if not body.startswith(TOOL_CALL_OPEN):
        return ParsedReply(content=body)
    inner = body[len(TOOL_CALL_OPEN):].split(TOOL_CALL_CLOSE, 1)[0]
    try:
        data = json.loads(inner)
        name, args = data["name"], data["arguments"]
    except (json.JSONDecodeError, KeyError, TypeError):
        return ParsedReply(content=body)
    return ParsedReply(content=None, tool_calls=[(str(name), json.dumps(args, ensure_ascii=False))])


def classify_prefix(text: str) -> str:
    """While streaming: "call" once `text` opens a tool call, "text" once it cannot,
    "undecided" while it is still a prefix of the opening tag (or blank)."""
    head = text.lstrip()
    if head.startswith(TOOL_CALL_OPEN):
        return "call"
    if TOOL_CALL_OPEN.startswith(head):
        return "undecided"
    return "text"
