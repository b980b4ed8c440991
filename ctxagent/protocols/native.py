"""The native protocol: tools go as the request's `tools` parameter, replies come back
with `tool_calls`. Nothing to translate: `encode` passes the request through, and the
loop reads a native reply as it is (`decode` is never asked)."""

from __future__ import annotations

from ctxagent.protocols.base import Decoded


class NativeProtocol:
    """The model's own tool calling (the default)."""

    name = "native"
    native = True

    def encode(self, messages: list[dict], tools: list[dict]) -> tuple[list[dict], list[dict] | None]:
        """(messages, tools or None), unchanged."""
        return messages, (tools or None)

    def decode(self, text: str | None, tools: list[dict], *, cut_off: bool = False) -> Decoded:
        """A native reply without tool calls is the final answer."""
        return Decoded("finish", answer=text or "")

    def correction(self, problem: str, tools: list[dict]) -> str:
        """Native replies never break a protocol: the problem itself."""
        return problem
