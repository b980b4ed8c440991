"""Parse the raw `arguments` string of a tool call (case L01).

Models send arguments as a JSON string, and sometimes send a broken one: cut off at the
output-token limit (`{"path": "src/ma` with finish_reason "length"), two objects glued
together (`{"a":1}{"b":2}`), or JSON that is not an object (`[1, 2]`). None of those may
run a tool: the model gets a tool result saying the arguments were invalid and to
resend. An empty string means no arguments (`{}`). A valid object passes unchanged.
The raw string itself is always kept in the history and transcript, untouched.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from ctxagent.redaction import redact

if TYPE_CHECKING:
    from ctxagent.tools.base import Tool


@dataclass(frozen=True)
class ParsedArguments:
    """`args` when `ok`; otherwise `problem` says what was wrong (for the model's feedback)."""

    ok: bool
    args: dict[str, Any] = field(default_factory=dict)
    problem: str = ""
    truncated: bool = False


def parse_arguments(raw: str | None, *, finish_reason: str | None = None) -> ParsedArguments:
    """Parse `raw` strictly. `finish_reason == "length"` marks a failure as truncation."""
    if raw is None or not raw.strip():
        return ParsedArguments(ok=True, args={})
    truncated = finish_reason == "length"
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return ParsedArguments(ok=False, problem=_describe(exc, raw), truncated=truncated)
    if not isinstance(value, dict):
        return ParsedArguments(ok=False, problem=f"expected a JSON object, got a JSON {_kind(value)}", truncated=truncated)
    return ParsedArguments(ok=True, args=value)


def _describe(exc: ValueError, raw: str) -> str:
    if isinstance(exc, json.JSONDecodeError):
        if exc.msg == "Extra data":
            return f"extra data after the first JSON value at character {exc.pos} (send exactly one JSON object)"
        return f"{exc.msg} at character {exc.pos} of {len(raw)}"
    return str(exc)


def _kind(value: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def redacted_arguments(tool: Tool, args: dict[str, Any], secrets: Iterable[str]) -> dict[str, Any]:
    """`args` as `tool` should get them: for a tool with `writes_state` (it stores what it is
    given under `.ctxagent/`), a copy with `secrets` and key-shaped strings replaced by
    `[REDACTED]` (`ctxagent.redaction.redact`); other tools get `args` unchanged (a patch
    or a command must stay exactly what was approved)."""
    return redact(args, secrets) if getattr(tool, "writes_state", False) else args
