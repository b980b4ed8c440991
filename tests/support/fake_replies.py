"""Scripted replies of the fake OpenAI server: step helpers and their rendering.

A step is a dict (see `tests/support/fake_openai.py` for the list of step types); a
`Reply` turns one step into stream deltas (content and tool-call arguments split into
small pieces, fragments of parallel calls interleaved) or a whole chat completion.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterable, Iterator

Step = dict[str, Any]


# ----------------------------------------------------------------- step helpers

def text(content: str, reasoning: str | None = None, **opts: Any) -> Step:
    """A plain text reply (with optional reasoning, streamed apart from content)."""
    return {"type": "text", "content": content, "reasoning": reasoning, **opts}


def tool_calls(calls: Iterable[Any], content: str | None = None, **opts: Any) -> Step:
    """Tool calls: `calls` items are (name, raw_args) pairs or dicts {name, arguments, id?}."""
    return {"type": "tool_calls", "calls": [_call(c) for c in calls], "content": content, **opts}


def error(status: int, body: Any = None, headers: dict[str, str] | None = None) -> Step:
    """An HTTP error reply; body defaults to an OpenAI-style error object for `status`."""
    return {"type": "error", "status": status, "body": body, "headers": headers or {}}


def raw(body: str, content_type: str = "text/event-stream", status: int = 200) -> Step:
    """A reply sent exactly as given (malformed SSE, an HTML page, a JSON body...), whatever was asked."""
    return {"type": "raw", "body": body, "content_type": content_type, "status": status}


def drop_stream_after(n_chunks: int, **reply: Any) -> Step:
    """Stream `n_chunks` chunks of the reply, then close the connection abruptly."""
    return {"type": "drop", "after_chunks": n_chunks, **reply}


def stream_error_after(n_chunks: int, err: dict[str, Any], **reply: Any) -> Step:
    """Stream `n_chunks` chunks, then a `data: {"error": err}` event, then end the stream."""
    return {"type": "drop", "after_chunks": n_chunks, "error": err, **reply}


def _call(c: Any) -> dict[str, Any]:
    if isinstance(c, dict):
        return dict(c)
    name, args = c
    return {"name": name, "arguments": args}


# ----------------------------------------------------------------- reply building

def _pieces(s: str, size: int) -> list[str]:
    return [s[i:i + size] for i in range(0, len(s), size)] or []


def default_error_body(status: int) -> dict[str, Any]:
    kinds = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
             429: "rate_limit_error"}
    return {"error": {"message": f"fake server error {status}", "type": kinds.get(status, "server_error"),
                      "param": None, "code": None}}


class Reply:
    """One scripted reply, turned into stream deltas or a whole completion."""

    def __init__(self, step: Step, request: dict[str, Any], n: int) -> None:
        self.step = step
        self.request = request
        self.n = n
        self.size = max(1, int(step.get("chunk_size", 4)))
        self.calls = [dict(c, id=c.get("id") or f"call_{n}_{i}") for i, c in enumerate(step.get("calls") or [])]
        self.content = step.get("content")
        if self.content is None and step["type"] in ("text", "drop") and not self.calls:
            self.content = "partial answer that never ends" if step["type"] == "drop" else ""

    def finish_reason(self) -> str:
        if self.step.get("finish_reason"):
            return self.step["finish_reason"]
        if self.step["type"] == "length":
            return "length"
        return "tool_calls" if self.calls else "stop"

    def deltas(self) -> Iterator[dict[str, Any]]:
        first: dict[str, Any] = {"role": "assistant"}
        if self.calls and self.content is None:
            first["content"] = "" if self.step.get("empty_content") == "" else None
        else:
            first["content"] = ""
        yield first
        field = self.step.get("reasoning_field", "reasoning_content")
        for piece in _pieces(self.step.get("reasoning") or "", self.size):
            yield {field: piece}
        for piece in _pieces(self.content or "", self.size):
            yield {"content": piece}
        yield from self._call_deltas()

    def _call_deltas(self) -> Iterator[dict[str, Any]]:
        queues = []
        for i, c in enumerate(self.calls):
            head = {"index": i, "id": c["id"], "type": "function",
                    "function": {"name": c["name"], "arguments": ""}}
            frags = [{"index": i, "function": {"arguments": p}} for p in _pieces(c["arguments"], self.size)]
            queues.append([head, *frags])
        if self.step.get("interleave", True):
            while any(queues):
                for q in queues:
                    if q:
                        yield {"tool_calls": [q.pop(0)]}
        else:
            for q in queues:
                for frag in q:
                    yield {"tool_calls": [frag]}

    def usage(self) -> dict[str, Any] | None:
        if "usage" in self.step:
            return self.step["usage"]
        prompt = len(json.dumps(self.request.get("messages", []))) // 4
        out = len(self.content or "") + len(self.step.get("reasoning") or "")
        out += sum(len(c["arguments"]) for c in self.calls)
        return {"prompt_tokens": prompt, "completion_tokens": out // 4 + 1,
                "total_tokens": prompt + out // 4 + 1}

    def completion(self, model: str) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.step.get("reasoning"):
            msg[self.step.get("reasoning_field", "reasoning_content")] = self.step["reasoning"]
        if self.calls:
            msg["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}}
                                 for c in self.calls]
        body = {"id": f"chatcmpl-fake-{self.n}", "object": "chat.completion", "created": int(time.time()),
                "model": model, "choices": [{"index": 0, "message": msg, "finish_reason": self.finish_reason()}]}
        if self.usage() is not None:
            body["usage"] = self.usage()
        return body
