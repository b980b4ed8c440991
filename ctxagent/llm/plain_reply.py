"""A 200 reply that is not an event stream: a whole completion, mislabelled SSE, or a web page.

Some servers ignore `stream: true` and answer one `chat.completion` object, some send SSE under
another Content-Type, a proxy or a wrong base_url answers HTML with status 200 (issue 15, item 7).
`reply_chunks` turns the first two into the chunk dicts the stream assembler takes (a completion
is one chunk carrying the whole message, so the same rules apply) and raises for the rest,
quoting what the server sent (`quoted`: one line, QUOTE characters; the client redacts the key).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ctxagent.llm.errors import ContextLengthError, ServerError, UnexpectedReplyError, _says_context_too_long

QUOTE = 300
"""Characters of the server's text quoted in an error."""
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def quoted(text: Any) -> str:
    """`text` (or its JSON) on one line, cut to QUOTE characters, in quotes: for error messages."""
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False, default=str)
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= QUOTE else flat[:QUOTE] + "…")


def is_event_stream(content_type: str | None) -> bool:
    """True for `text/event-stream` (any parameters)."""
    return "text/event-stream" in (content_type or "").lower()


def reply_chunks(body: bytes, content_type: str | None, base_url: str) -> list[dict[str, Any]]:
    """The chunk dicts of a reply that came without `text/event-stream`. Raises UnexpectedReplyError
    (HTML page, text that is not JSON, JSON that is no completion), ServerError/ContextLengthError
    (an `error` object answered with status 200)."""
    text = body.decode("utf-8", errors="replace")
    head = text.lstrip()
    shown_type = content_type or "no Content-Type"
    if head.startswith(("data:", "event:", ":")):
        return sse_chunks(text)
    if "html" in shown_type.lower() or head[:15].lower().startswith(("<!doctype", "<html")):
        title = _TITLE.search(text)
        page = f"an HTML page titled {quoted(title.group(1))}" if title else f"an HTML page: {quoted(text)}"
        raise UnexpectedReplyError(
            f"the server answered text/html ({page}) with status 200, not chat completion chunks: "
            f"model.base_url {base_url} points at a web page, a login page or a proxy, not an OpenAI-compatible "
            "API root")
    try:
        data = json.loads(text)
    except ValueError:
        raise UnexpectedReplyError(f"the server answered {shown_type} that is neither an event stream nor JSON: "
                                   f"{quoted(text)}") from None
    return [completion_chunk(data)]


def sse_chunks(text: str) -> list[dict[str, Any]]:
    """The `data:` events of an SSE body, up to `[DONE]`. Raises UnexpectedReplyError for data that
    is not a JSON object, ServerError for an `error` event."""
    chunks = []
    for line in text.splitlines():
        if not line.startswith("data:"):
            continue  # event names, comments, blank separators
        payload = line[5:].strip()
        if payload == "[DONE]":
            break
        try:
            data = json.loads(payload)
        except ValueError:
            raise UnexpectedReplyError(f"the server sent stream data that is not JSON: {quoted(payload)}") from None
        if not isinstance(data, dict):
            raise UnexpectedReplyError(f"the server sent stream data that is not a chunk object: {quoted(payload)}")
        _raise_error_object(data)
        chunks.append(data)
    return chunks


def completion_chunk(data: Any) -> dict[str, Any]:
    """One `chat.completion` object as a single stream chunk (message -> delta, finish_reason kept, or
    "tool_calls"/"stop" when the server left it out: a whole body is complete)."""
    _raise_error_object(data)
    choices = data.get("choices") if isinstance(data, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    message = choice.get("message") if choice is not None else None
    if not isinstance(message, dict):
        raise UnexpectedReplyError(f"the server answered JSON that is not a chat completion: {quoted(data)}")
    delta = {k: v for k, v in message.items() if k != "tool_calls"}
    calls = message.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise UnexpectedReplyError(f"the server answered tool_calls that are not a list: {quoted(calls)}")
    if calls:
        delta["tool_calls"] = [{**call, "index": i} if isinstance(call, dict) else call for i, call in enumerate(calls)]
    finish = choice.get("finish_reason") or ("tool_calls" if calls else "stop")
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": data.get("usage")}


def _raise_error_object(data: Any) -> None:
    if not isinstance(data, dict) or "error" not in data or "choices" in data:
        return
    err = data["error"]
    text = err.get("message") if isinstance(err, dict) else err
    message = f"the server answered status 200 with an error: {' '.join(str(text).split())[:500]}"
    if _says_context_too_long(message):
        raise ContextLengthError(message, hint="The conversation is longer than the model's context; compact it.")
    raise ServerError(message, hint="The provider reported an error; try again later.")
