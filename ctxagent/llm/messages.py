"""What goes to and comes from the model: ToolCall, StreamDelta, ChatResponse, outgoing shaping.

Messages stay OpenAI chat-completions dicts on the wire (docs/context.md, "Message rules"). Two
provider differences are settled here, in one place:
  - `reasoning_content` (DeepSeek thinking mode, case C06) is kept on assistant messages
    in history and sent back only when `settings.send_reasoning_content` is set;
  - the content of an assistant message that has tool calls but no text is sent as
    null or "" per `settings.empty_content` (case C07). No message is ever dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ctxagent.llm.usage import Usage

if TYPE_CHECKING:
    from ctxagent.llm.settings import ModelSettings


@dataclass
class ToolCall:
    """One tool call requested by the model. `arguments` is the RAW string the model sent
    (it may be invalid JSON, e.g. cut by finish_reason "length"; the loop validates it)."""

    id: str
    name: str
    arguments: str

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI `tool_calls` entry: {"id", "type": "function", "function": {...}}."""
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.arguments}}


@dataclass
class StreamDelta:
    """A piece of the reply as it streams in, for live rendering.

    kind "text": content text; "reasoning": reasoning text (never part of content);
    "tool_call": an argument fragment of the call at `index` (its `name`, when known).
    """

    kind: Literal["text", "reasoning", "tool_call"]
    text: str
    index: int | None = None
    name: str | None = None


@dataclass
class ChatResponse:
    """One complete model reply: `content` (None when only tool calls), `tool_calls` (complete, in
    index order), `reasoning_content` (kept apart, case C06, or None), `finish_reason` ("stop",
    "tool_calls", "length", "content_filter"... as the server said), `usage` (tokens and cost)."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning_content: str | None = None
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)

    def assistant_message(self, settings: ModelSettings) -> dict[str, Any]:
        """The assistant message to append to history.

        Content beside tool calls follows settings.empty_content (null or ""); a reply
        with neither text nor calls gets "". `reasoning_content` is kept as a key when
        present (whether it is SENT is decided per request, in `prepare_messages`).
        """
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [call.to_dict() for call in self.tool_calls]
            if not self.content:
                msg["content"] = _empty(settings)
        elif msg["content"] is None:
            msg["content"] = ""
        if self.reasoning_content is not None:
            msg["reasoning_content"] = self.reasoning_content
        return msg


def _empty(settings: ModelSettings) -> str | None:
    return None if settings.empty_content == "null" else ""


def prepare_messages(messages: list[dict[str, Any]], settings: ModelSettings) -> list[dict[str, Any]]:
    """The messages as they are sent: same order and count, inputs never mutated.

    Assistant: `reasoning_content` removed unless settings.send_reasoning_content (and when None), an empty
    `tool_calls` removed, empty content beside tool calls per settings.empty_content, None without them "".
    Every message: a lone surrogate becomes U+FFFD (docs/providers.md, "Request text is UTF-8").
    """
    return [_wire_text(_prepare_assistant(m, settings) if m.get("role") == "assistant" else m)
            for m in messages]


_SURROGATE = re.compile("[\ud800-\udfff]")


def _wire_text(value: Any) -> Any:
    """`value` (a message, or any JSON value inside one) with lone surrogates replaced by
    U+FFFD; the same object when it holds none, a copy otherwise."""
    if isinstance(value, str):
        return value if value.isascii() or not _SURROGATE.search(value) else _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        items = {key: _wire_text(item) for key, item in value.items()}
        return value if all(items[key] is value[key] for key in value) else items
    if isinstance(value, list):
        items = [_wire_text(item) for item in value]
        return value if all(a is b for a, b in zip(items, value)) else items
    return value


def _prepare_assistant(msg: dict[str, Any], settings: ModelSettings) -> dict[str, Any]:
    out = dict(msg)
    if not settings.send_reasoning_content or out.get("reasoning_content") is None:
        out.pop("reasoning_content", None)
    if "tool_calls" in out and not out["tool_calls"]:
        del out["tool_calls"]
    if out.get("tool_calls"):
        if not out.get("content"):
            out["content"] = _empty(settings)
    elif out.get("content") is None:
        out["content"] = ""
    return out
