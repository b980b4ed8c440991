"""Message pairing: every assistant tool call gets exactly one `tool` result (cases C02, C07).

`repair_pairing` (from `ctxagent.context.messages`) makes any message list valid for an
OpenAI-compatible endpoint: a call without a result gets a synthetic "not executed:
interrupted" result right after its siblings' results, an orphan or duplicate result is
dropped, an assistant message with neither content nor tool calls is dropped, and one
that carries tool calls is never dropped for having empty content (C07). This module
adds what the loop and the tests need around it.
"""

from __future__ import annotations

from typing import Any

# One implementation of the repair, shared with the context engine (which works on plain data).
from ctxagent.context.messages import INTERRUPTED_RESULT, repair_pairing

__all__ = ["INTERRUPTED_RESULT", "pairing_errors", "repair_pairing", "tool_message", "unanswered_calls"]


def tool_message(call_id: str, content: str) -> dict[str, Any]:
    """The OpenAI `tool` message answering `call_id`."""
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def unanswered_calls(messages: list[dict[str, Any]]) -> list[str]:
    """Ids of tool calls with no `tool` result right after their assistant message (empty when valid)."""
    missing: list[str] = []
    open_ids: list[str] = []
    for message in [*messages, {"role": "user"}]:
        if message.get("role") == "tool":
            if message.get("tool_call_id") in open_ids:
                open_ids.remove(message.get("tool_call_id"))
            continue
        missing.extend(open_ids)
        open_ids = [c.get("id") for c in message.get("tool_calls") or []] if message.get("role") == "assistant" else []
    return missing


def pairing_errors(messages: list[dict[str, Any]]) -> list[str]:
    """Describe every pairing violation (empty list when valid). Call ids need only be unique
    within one assistant message (some local servers reuse `call_0`)."""
    errors = [f"call {i} has no result" for i in unanswered_calls(messages)]
    open_ids: set[str] = set()
    seen: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_ids:
                errors.append(f"message {index}: tool result {call_id} answers no preceding call")
            elif call_id in seen:
                errors.append(f"message {index}: second result for {call_id}")
            seen.add(call_id)
            continue
        open_ids = {c.get("id") for c in message.get("tool_calls") or []} if role == "assistant" else set()
        seen = set()
    return errors
