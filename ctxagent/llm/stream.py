"""Assembling a streamed chat completion into one `ChatResponse`.

`StreamAssembler.feed(chunk)` returns the `StreamDelta`s to show; `result()` returns the
reply or raises. Tool-call fragments merge by `index`; reasoning fields and a leading
`<think>` go to reasoning; no finish_reason raises StreamInterruptedError. Rules (cases
L03, C06, C07): docs/providers.md ("Module notes").
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from ctxagent.llm.errors import StreamInterruptedError
from ctxagent.llm.messages import ChatResponse, StreamDelta, ToolCall
from ctxagent.llm.think_tags import ThinkTagSplitter
from ctxagent.llm.usage import usage_from_dict


@dataclass
class _PartialCall:
    index: int
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamAssembler:
    """Accumulates stream chunks (dicts) of choice 0 into a ChatResponse."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._saw_content = False
        self._reasoning: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._slot_of_index: dict[int, int] = {}
        self.finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None
        self.chunks = 0
        self._think = ThinkTagSplitter()

    def feed(self, chunk: dict[str, Any]) -> list[StreamDelta]:
        """Take one chunk; return the deltas it carries, in order."""
        self.chunks += 1
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        deltas: list[StreamDelta] = []
        for choice in chunk.get("choices") or []:
            if (choice.get("index") or 0) != 0:
                continue
            deltas.extend(self._feed_delta(choice.get("delta") or {}))
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return deltas

    def _feed_delta(self, delta: dict[str, Any]) -> list[StreamDelta]:
        out: list[StreamDelta] = []
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self._reasoning.append(reasoning)
            out.append(StreamDelta("reasoning", reasoning))
        content = delta.get("content")
        if isinstance(content, str):
            self._saw_content = True
            out.extend(self._route(self._think.feed(content)))
        for frag in delta.get("tool_calls") or []:
            out.append(self._feed_call(frag))
        return out

    def _route(self, pieces: list[tuple[str, str]]) -> list[StreamDelta]:
        for kind, piece in pieces:
            (self._content if kind == "text" else self._reasoning).append(piece)
        return [StreamDelta("text" if kind == "text" else "reasoning", piece) for kind, piece in pieces]

    def flush(self) -> list[StreamDelta]:
        """Deltas held back at the end of the stream (a partial `<think>` tag...)."""
        return self._route(self._think.flush())

    def _feed_call(self, frag: dict[str, Any]) -> StreamDelta:
        slot = self._slot_for(frag)
        function = frag.get("function") or {}
        if frag.get("id") and not slot.id:
            slot.id = frag["id"]
        name = function.get("name")
        if name and name != slot.name:
            slot.name = name if not slot.name else slot.name + name
        args = function.get("arguments")
        if args is not None and not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        if args:
            slot.arguments.append(args)
        return StreamDelta("tool_call", args or "", index=slot.index, name=slot.name or None)

    def _slot_for(self, frag: dict[str, Any]) -> _PartialCall:
        frag_id = frag.get("id") or ""
        index = frag.get("index")
        if index is None:
            by_id = [c for c in self._calls.values() if frag_id and c.id == frag_id]
            if by_id:
                return by_id[0]
            if not frag_id and self._calls:
                return self._calls[max(self._calls)]
            return self._new_slot(len(self._calls))
        key = self._slot_of_index.get(index)
        if key is None:
            return self._new_slot(index)
        slot = self._calls[key]
        if frag_id and slot.id and frag_id != slot.id:
            return self._new_slot(index)
        return slot

    def _new_slot(self, index: int) -> _PartialCall:
        key = index if index not in self._calls else max(self._calls) + 1
        self._calls[key] = _PartialCall(index=key)
        self._slot_of_index[index] = key
        return self._calls[key]

    def result(self) -> ChatResponse:
        """The assembled reply. Raises StreamInterruptedError when the stream was cut off
        (no finish_reason) or a tool call never got its name."""
        if self.finish_reason is None:
            raise StreamInterruptedError(
                f"the model's reply stream ended after {self.chunks} chunk(s) without a finish_reason"
            )
        self.flush()
        calls = [self._complete(self._calls[k]) for k in sorted(self._calls)]
        content = "".join(self._content) if self._saw_content else None
        reasoning = "".join(self._reasoning) if self._reasoning else None
        return ChatResponse(content=content, tool_calls=calls, reasoning_content=reasoning,
                            finish_reason=self.finish_reason, usage=usage_from_dict(self._usage))

    def _complete(self, slot: _PartialCall) -> ToolCall:
        if not slot.name:
            raise StreamInterruptedError(
                f"the model's reply has a tool call (index {slot.index}) without a function name"
            )
        call_id = slot.id or f"call_{uuid.uuid4().hex[:24]}"
        return ToolCall(id=call_id, name=slot.name, arguments="".join(slot.arguments))
