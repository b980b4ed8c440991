"""The tool list of a text protocol's guide, read from the tools' JSON schemas.

Each tool becomes its name, its description (as written) and one line per argument:
`name (type, required): description; one of: a, b` (`anyOf` types joined with "or",
null left out; arrays as "array of <item type>"; `$ref` and nested objects as "object").
Generated, never written by hand: a new tool or argument shows up in the guide at once.
"""

from __future__ import annotations

from typing import Any


def tool_entries(tools: list[dict]) -> list[dict[str, Any]]:
    """[{"name", "description", "arguments": [line, ...]}] for OpenAI tool schemas."""
    entries = []
    for schema in tools:
        function = schema.get("function") or {}
        if not function.get("name"):
            continue
        params = function.get("parameters") or {}
        required = set(params.get("required") or [])
        lines = [argument_line(key, spec, key in required)
                 for key, spec in (params.get("properties") or {}).items() if isinstance(spec, dict)]
        entries.append({"name": function["name"], "description": str(function.get("description", "")).strip(),
                        "arguments": lines})
    return entries


def argument_line(key: str, spec: dict, required: bool) -> str:
    """One argument: `key (type[, required]): description[; one of: ...]`."""
    kind = type_name(spec)
    head = f"{key} ({kind}{', required' if required else ''})"
    description = " ".join(str(spec.get("description", "")).split())
    enum = _enum(spec)
    tail = f"; one of: {', '.join(map(str, enum))}" if enum else ""
    return f"{head}: {description}{tail}" if description or tail else head


def type_name(spec: dict) -> str:
    """The JSON type of a schema node, readable: "string", "integer or string", "array of string"."""
    if "anyOf" in spec:
        kinds = [type_name(s) for s in spec["anyOf"] if isinstance(s, dict) and s.get("type") != "null"]
        return " or ".join(dict.fromkeys(kinds)) or "any"
    kind = spec.get("type")
    if kind == "array":
        items = spec.get("items")
        return f"array of {type_name(items)}" if isinstance(items, dict) else "array"
    if isinstance(kind, list):
        return " or ".join(k for k in kind if k != "null") or "any"
    if kind:
        return str(kind)
    return "object" if "$ref" in spec or "properties" in spec else "any"


def _enum(spec: dict) -> list[Any]:
    if isinstance(spec.get("enum"), list):
        return spec["enum"]
    for sub in spec.get("anyOf") or []:
        if isinstance(sub, dict) and isinstance(sub.get("enum"), list):
            return sub["enum"]
    return []
