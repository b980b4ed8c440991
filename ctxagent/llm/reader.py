"""Reading one reply in a daemon thread: the SSE chunks, or a body that is no event stream.

The caller's thread never blocks on the network, so it can honour cancel and Ctrl-C at once;
`abandon()` closes the stream without waiting. A reply whose Content-Type is not
`text/event-stream` is read whole and handed to `plain_reply.py`. Failures become typed errors:
SDK errors through the table, stream data that is not JSON (the SDK's JSONDecodeError) or not a
chunk object as UnexpectedReplyError quoting it, a break after the first chunk as
StreamInterruptedError (case L03).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from typing import Any, Callable, Iterator

import openai

from ctxagent.llm.errors import (
    LLMCancelledError,
    ProviderError,
    StreamInterruptedError,
    UnexpectedReplyError,
    classify_exception,
)
from ctxagent.llm.plain_reply import is_event_stream, quoted, reply_chunks

log = logging.getLogger("ctxagent.llm")
_POLL_S = 0.05


class ReplyReader:
    """Opens the stream with `open_stream()` and hands chunk dicts over a queue; `base_url` is named
    in errors about a reply that is not an event stream."""

    def __init__(self, open_stream: Callable[[], Any], base_url: str) -> None:
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._stream: Any = None
        self._abandoned = threading.Event()
        self._base_url = base_url
        threading.Thread(target=self._run, args=(open_stream,), daemon=True,
                         name="ctxagent-llm-stream").start()

    def _run(self, open_stream: Callable[[], Any]) -> None:
        try:
            self._stream = open_stream()
            response = getattr(self._stream, "response", None)
            content_type = response.headers.get("content-type") if response is not None else "text/event-stream"
            if not is_event_stream(content_type):
                for chunk in reply_chunks(response.read(), content_type, self._base_url):
                    self._queue.put(("chunk", chunk))
            else:
                for chunk in self._stream:
                    if self._abandoned.is_set():
                        break
                    self._queue.put(("chunk", _chunk_dict(chunk)))
            self._queue.put(("end", None))
        except BaseException as exc:  # handed to the caller's thread, which decides
            self._queue.put(("error", exc))
        finally:
            if self._abandoned.is_set() and self._stream is not None:
                close_quietly(self._stream)

    def chunks(self, cancel: threading.Event | None, chunks_seen: Callable[[], int]) -> Iterator[dict[str, Any]]:
        """Yield chunk dicts until the stream ends. Raises LLMCancelledError when `cancel` is set; a
        ProviderError for failures (`chunks_seen()`: how many chunks the caller took so far)."""
        while True:
            if cancel is not None and cancel.is_set():
                raise LLMCancelledError("cancelled while the model was answering")
            try:
                kind, value = self._queue.get(timeout=_POLL_S)
            except queue.Empty:
                continue
            if kind == "chunk":
                yield value
            elif kind == "end":
                return
            else:
                raise stream_failure(value, chunks_seen())

    def abandon(self) -> None:
        """Stop reading and close the stream in the background; never blocks."""
        self._abandoned.set()
        stream = self._stream
        if stream is not None:
            threading.Thread(target=close_quietly, args=(stream,), daemon=True).start()


def _chunk_dict(chunk: Any) -> dict[str, Any]:
    # warnings off: a chunk of the wrong shape is reported below, not as a pydantic serializer warning
    data = chunk.to_dict(warnings=False) if hasattr(chunk, "to_dict") else chunk
    if not isinstance(data, dict):
        raise UnexpectedReplyError(f"the server sent stream data that is not a chunk object: {quoted(data)}")
    return data


def close_quietly(stream: Any) -> None:
    """Close `stream`, logging (not raising) a failure: the connection is being abandoned."""
    try:
        stream.close()
    except Exception:
        log.debug("closing an abandoned stream failed", exc_info=True)


def stream_failure(exc: BaseException, chunks_seen: int) -> BaseException:
    """The error to raise for `exc`, raised while reading after `chunks_seen` chunks."""
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, json.JSONDecodeError):  # the SDK parses each `data:` line with json.loads
        after = f" after {chunks_seen} chunk(s)" if chunks_seen else ""
        return UnexpectedReplyError(f"the server sent stream data that is not JSON{after}: {quoted(exc.doc)}")
    if not isinstance(exc, openai.OpenAIError):
        return exc
    err = classify_exception(exc)
    if chunks_seen == 0:
        return err
    return StreamInterruptedError(
        f"the model's reply stream broke after {chunks_seen} chunk(s): {err.message}",
        status=err.status, headers=err.headers, body=err.body,
    )
