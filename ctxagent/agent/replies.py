"""A model reply read through the session's protocol, as the loop keeps it: native form.

`read_reply(protocol, response, tools)`: a native protocol's reply passes unchanged. A
text protocol's reply text is decoded (`WireProtocol.decode`) into the same shape a
native reply has: an action becomes one tool call (its thought the content), a final
answer the content alone, and a reply that broke the protocol its raw text with one call
to PROTOCOL_ERROR, which the loop answers with the correction. From there on the loop
treats every protocol alike (docs/protocols.md).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ctxagent.agent.events import Event, ReasoningDelta, TextDelta
from ctxagent.llm.messages import ToolCall
from ctxagent.protocols import MAX_VIOLATIONS, PROTOCOL_ERROR, Decoded, WireProtocol
from ctxagent.protocols.base import new_call_id


def read_reply(protocol: WireProtocol, response: Any, tools: list[dict]) -> tuple[Any, Decoded | None]:
    """(the reply in native form, what was decoded: None for a native protocol)."""
    if protocol.native:
        return response, None
    decoded = protocol.decode(response.content, tools, cut_off=response.finish_reason == "length")
    if decoded.kind == "action":
        call = ToolCall(new_call_id(), decoded.name, decoded.arguments)
        return replace(response, content=decoded.thought or None, tool_calls=[call], finish_reason="tool_calls"), decoded
    if decoded.kind == "finish":
        return replace(response, content=decoded.answer, tool_calls=[], finish_reason="stop"), decoded
    call = ToolCall(new_call_id(), PROTOCOL_ERROR, json.dumps({"problem": decoded.problem}, ensure_ascii=False))
    return replace(response, content=response.content or "", tool_calls=[call]), decoded


def shown_events(decoded: Decoded | None) -> list[Event]:
    """What the user sees of a decoded text reply: its thought as reasoning, a final answer
    as the answer; never the raw tags (a native reply streamed already: nothing)."""
    if decoded is None:
        return []
    events: list[Event] = [ReasoningDelta(text=decoded.thought.strip() + "\n")] if decoded.thought.strip() else []
    if decoded.kind == "finish":
        events.append(TextDelta(text=decoded.answer))
    return events


def protocol_name(settings: Any, session: Any) -> str:
    """The protocol a session runs with: `settings.model.protocol`, or the one the session
    switched to (`session.protocol`) when the configured one is native and was not given as
    a flag (so `--protocol native` goes back to native tool calls)."""
    configured = settings.model.protocol
    remembered = getattr(session, "protocol", None)
    from_flag = str(settings.sources.get("model.protocol", "")).startswith("flag")
    return remembered if remembered and configured == "native" and not from_flag else configured


def switch_notice(previous: str, name: str, reason: str) -> str:
    """The notice of an automatic switch from protocol `previous` to `name` (`reason`: the server's words)."""
    return (f"the server refused native tool calls ({reason}); this session now uses the {name} protocol "
            f'instead of {previous} (remembered on resume; set [model] protocol = "{name}" to start with it)')


def violation_text(protocol: str, count: int, problem: str, *, final: bool = False) -> str:
    """The notice of the `count`-th broken reply in a row, or (`final`) the error that ends the turn."""
    if final:
        return (f"the model broke the {protocol} protocol {count} times in a row (last: {problem}); the turn "
                "ends. Try another protocol (--protocol xml, react or native) or a stronger model")
    return f"the model's reply broke the {protocol} protocol ({count}/{MAX_VIOLATIONS}): {problem}; it was told the form"
