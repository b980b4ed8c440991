"""Step 1 of compaction: observation masking.

Old tool results become a one-line placeholder naming the call; the `keep_recent` most
recent stay. Only `content` changes (pairing and `reasoning_content` kept, case C06);
idempotent. After Lindenbauer et al. 2025, "The Complexity Trap" (docs/compaction.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

MASK_PREFIX = "[observation masked:"
#: Results shorter than this (characters) are left alone: the placeholder would not be shorter.
MIN_MASK_CHARS = 200
_ARG_CHARS = 80


@dataclass(frozen=True)
class CallInfo:
    """A tool call as the assistant made it: `name` and parsed `arguments` (dict)."""

    name: str
    arguments: dict


def parse_arguments(raw) -> dict:
    """Tool-call arguments as a dict; a raw string that is not a JSON object gives {"raw": s}."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {"raw": str(raw)}
    return value if isinstance(value, dict) else {"raw": str(raw)}


def calls_by_id(messages: list[dict]) -> dict[str, CallInfo]:
    """Every tool call of every assistant message, keyed by its id."""
    out: dict[str, CallInfo] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            out[str(call.get("id"))] = CallInfo(str(function.get("name", "tool")), parse_arguments(function.get("arguments")))
    return out


def describe_call(info: CallInfo | None) -> str:
    """A short human-readable call: `terminal "cat src/a.py"`, `read_file {"path": "a.py"}`."""
    if info is None:
        return "tool"
    args = info.arguments
    for key in ("command", "cmd", "path", "query", "pattern", "url"):
        value = args.get(key)
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        if isinstance(value, str) and value:
            return f'{info.name} "{_clip(value)}"'
    if not args:
        return info.name
    return f"{info.name} {_clip(json.dumps(args, ensure_ascii=False, sort_keys=True))}"


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _ARG_CHARS else text[: _ARG_CHARS - 3] + "..."


def _how_to_recover(info: CallInfo | None) -> str:
    if info is not None and ("command" in info.arguments or "cmd" in info.arguments):
        return "re-run the command to see it"
    return "call the tool again with the same arguments to see it"


def placeholder(info: CallInfo | None, content: str) -> str:
    """The one-line placeholder for a masked result of `info` whose text was `content`."""
    return f"{MASK_PREFIX} {describe_call(info)} -> {len(content):,} chars; {_how_to_recover(info)}]"


def is_masked(message: dict) -> bool:
    """True when `message` is a tool result already replaced by a placeholder."""
    content = message.get("content")
    return isinstance(content, str) and content.startswith(MASK_PREFIX)


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def mask_observations(
    messages: list[dict], *, keep_recent: int = 3, min_chars: int = MIN_MASK_CHARS
) -> tuple[list[dict], list[int]]:
    """Mask every tool result except the `keep_recent` most recent ones.

    Returns (new message list, indexes of the messages masked). The input list and its
    dicts are not modified; masked messages are shallow copies with a new `content`.
    Results under `min_chars` characters and results already masked are skipped.
    """
    calls = calls_by_id(messages)
    tool_indexes = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
    keep = set(tool_indexes[-keep_recent:]) if keep_recent > 0 else set()
    out, masked = list(messages), []
    for i in tool_indexes:
        message = messages[i]
        text = _text(message.get("content"))
        if i in keep or is_masked(message) or len(text) < min_chars:
            continue
        info = calls.get(str(message.get("tool_call_id")))
        out[i] = {**message, "content": placeholder(info, text)}
        masked.append(i)
    return out, masked
