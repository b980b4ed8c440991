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

from ctxagent.llm.messages import ChatResponse, ToolCall
from ctxagent.protocols import PROTOCOL_ERROR, Decoded, WireProtocol
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


__all__ = ["ChatResponse", "read_reply"]
