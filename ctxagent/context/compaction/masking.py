"""Step 1 of compaction: observation masking.

Old tool results become a one-line placeholder naming the call, its first line and how to
get it back; the `keep_recent` most recent and small ones (under MIN_MASK_CHARS) stay;
`mask_to_target` masks oldest first only as far as a token target needs (issue 16). Only
`content` changes (pairing kept, case C06); idempotent. After Lindenbauer et al. 2025,
"The Complexity Trap" (docs/compaction.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

MASK_PREFIX = "[observation masked:"
#: Results shorter than this (characters) are never masked: masking one saves little (a
#: 247-character result saves 25 tokens) and changes the request from that point on, so a
#: provider's prompt cache re-reads everything after it (issue 16).
MIN_MASK_CHARS = 1000
_ARG_CHARS = 80
_FIRST_LINE_CHARS = 100


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


def _clip(text: str, limit: int = _ARG_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _how_to_recover(info: CallInfo | None) -> str:
    if info is not None and ("command" in info.arguments or "cmd" in info.arguments):
        return "re-run the command to see it"
    return "call the tool again with the same arguments to see it"


def first_line(content: str) -> str:
    """The first non-blank line of `content`, whitespace folded, at most 100 characters."""
    line = next((ln for ln in content.splitlines() if ln.strip()), "")
    return _clip(line, _FIRST_LINE_CHARS)


def placeholder(info: CallInfo | None, content: str) -> str:
    """The one-line placeholder for a masked result of `info` whose text was `content`."""
    head = first_line(content)
    head = f", first line {json.dumps(head, ensure_ascii=False)}" if head else ""
    return f"{MASK_PREFIX} {describe_call(info)} -> {len(content):,} chars{head}; {_how_to_recover(info)}]"


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


def maskable(messages: list[dict], *, keep_recent: int = 3, min_chars: int = MIN_MASK_CHARS) -> list[int]:
    """Indexes of the tool results that may be masked, oldest first: not among the
    `keep_recent` most recent results, not already masked, at least `min_chars` long."""
    tool_indexes = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
    keep = set(tool_indexes[-keep_recent:]) if keep_recent > 0 else set()
    return [i for i in tool_indexes if i not in keep and not is_masked(messages[i])
            and len(_text(messages[i].get("content"))) >= min_chars]


def _masked(messages: list[dict], indexes: list[int]) -> list[dict]:
    calls = calls_by_id(messages)
    out = list(messages)
    for i in indexes:
        message = messages[i]
        info = calls.get(str(message.get("tool_call_id")))
        out[i] = {**message, "content": placeholder(info, _text(message.get("content")))}
    return out


def mask_observations(
    messages: list[dict], *, keep_recent: int = 3, min_chars: int = MIN_MASK_CHARS
) -> tuple[list[dict], list[int]]:
    """Mask every tool result except the `keep_recent` most recent ones.

    Returns (new message list, indexes of the messages masked). The input list and its
    dicts are not modified; masked messages are shallow copies with a new `content`.
    Results under `min_chars` characters and results already masked are skipped.
    """
    indexes = maskable(messages, keep_recent=keep_recent, min_chars=min_chars)
    return _masked(messages, indexes), indexes


def mask_to_target(messages: list[dict], *, excess: int, count_text, keep_recent: int = 3,
                   min_chars: int = MIN_MASK_CHARS) -> tuple[list[dict], list[int]]:
    """Mask the oldest maskable results (`maskable`) until the tokens saved reach `excess`
    (the request's tokens above its target), or all of them when that is not enough.
    `count_text(str) -> int` counts tokens. Returns (new list, indexes masked); the input
    is not modified. Masking more than needed at once keeps later requests unchanged."""
    picked, saved = [], 0
    calls = calls_by_id(messages)
    for i in maskable(messages, keep_recent=keep_recent, min_chars=min_chars):
        if saved >= excess:
            break
        text = _text(messages[i].get("content"))
        info = calls.get(str(messages[i].get("tool_call_id")))
        saved += count_text(text) - count_text(placeholder(info, text))
        picked.append(i)
    return _masked(messages, picked), picked
