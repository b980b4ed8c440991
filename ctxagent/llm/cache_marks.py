"""Anthropic-style `cache_control` breakpoints at the end of a request's stable prefix.

Providers with explicit prompt caching (Anthropic models through OpenRouter, DashScope's explicit
cache) cache the prefix up to a content part marked `"cache_control": {"type": "ephemeral"}`. Two
marks: the system message, and the last history message (the newest before the request's
trailing user messages: this turn's request or a state block), so the next call, which extends
the history, reads all of it from cache. Only with `model.cache_control` (off by default).
"""

from __future__ import annotations

from typing import Any

MARK = {"type": "ephemeral"}


def mark_stable_prefix(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` with the first system message and the last history message marked (copies; the
    input is not mutated). The last history message is the last message when it is an assistant or
    tool message, else the one before the trailing user message(s)."""
    out = list(messages)
    targets = {i for i, m in enumerate(out[:1]) if m.get("role") == "system"}
    end = len(out)
    while end > 0 and out[end - 1].get("role") == "user":
        end -= 1
    if end > 0 and (end - 1) not in targets:
        targets.add(end - 1)
    for i in targets:
        out[i] = _marked(out[i])
    return out


def _marked(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, str) and content:
        parts: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list) and content and isinstance(content[-1], dict):
        parts = [*content[:-1], dict(content[-1])]
    else:
        return message  # nothing to put a mark on (an assistant message with only tool calls)
    parts[-1]["cache_control"] = dict(MARK)
    return {**message, "content": parts}
