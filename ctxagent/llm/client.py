"""`LLMClient`: one streaming chat-completions call, with our retries, cancel and typed errors.

On the `openai` SDK with its retries off: backoff is `ctxagent.llm.retry`, errors map
through `ctxagent.llm.errors`. The stream runs in a daemon thread; the caller's thread
assembles chunks and honours `cancel` at once. An error after the first chunk is a
StreamInterruptedError, not retried (docs/providers.md, "Streaming, retries and errors").
"""

from __future__ import annotations

import logging
import queue
import re
import threading
import time
from typing import Any, Callable, Iterator

import openai

from ctxagent.llm.errors import (
    BadRequestError,
    LLMCancelledError,
    ProviderError,
    StreamInterruptedError,
    classify_exception,
)
from ctxagent.llm.messages import ChatResponse, StreamDelta, ToolCall, prepare_messages
from ctxagent.llm.presets import resolve_api_key, resolve_base_url
from ctxagent.llm.retry import RetryPolicy, call_with_retries, full_jitter
from ctxagent.llm.settings import ModelSettings
from ctxagent.llm.stream import StreamAssembler
from ctxagent.llm.usage import Usage, cost_usd

__all__ = ["ChatResponse", "LLMClient", "StreamDelta", "ToolCall", "Usage"]

log = logging.getLogger("ctxagent.llm")
_POLL_S = 0.05
_STREAM_OPTIONS_REJECTED = re.compile(r"stream_options|include_usage", re.IGNORECASE)


class LLMClient:
    """Chat with one OpenAI-compatible endpoint described by a ModelSettings. `sleep(seconds)`: the
    backoff sleep (None: waits on the cancel event, so a cancel cuts it short); `jitter(bound_s)`:
    default uniform in [0, bound]. Raises ConfigError when the endpoint or key cannot be resolved."""

    def __init__(
        self,
        settings: ModelSettings,
        *,
        sleep: Callable[[float], None] | None = None,
        jitter: Callable[[float], float] = full_jitter,
    ) -> None:
        self.settings = settings
        self.base_url = resolve_base_url(settings)
        self._sdk = openai.OpenAI(
            base_url=self.base_url,
            api_key=resolve_api_key(settings),
            timeout=settings.timeout_s,
            max_retries=0,
        )
        self._policy = RetryPolicy(max_retries=settings.max_retries)
        self._sleep = sleep
        self._jitter = jitter
        self.stream_options_supported = True

    def __repr__(self) -> str:
        s = self.settings
        return f"LLMClient(provider={s.provider!r}, model={s.model!r}, base_url={self.base_url!r})"

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._sdk.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        on_delta: Callable[[StreamDelta], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> ChatResponse:
        """Send `messages` (OpenAI chat dicts, not mutated) and `tools` (schemas, as given); return
        the reply. `on_delta`: each fragment as it arrives, in the caller's thread; `cancel`: stops
        at once. Raises a ProviderError subclass (RateLimitError, ServerError, BadRequestError,
        ContextLengthError, AuthenticationError, ModelNotFoundError, LLMConnectionError,
        StreamInterruptedError) or LLMCancelledError (cancel set or Ctrl-C)."""
        request = self.build_request(messages, tools)
        log.debug("chat: model=%s messages=%d tools=%d", self.settings.model,
                  len(messages), len(tools or []))
        try:
            return call_with_retries(
                lambda: self._attempt(request, on_delta, cancel),
                self._policy,
                sleep=lambda seconds: self._backoff(seconds, cancel),
                jitter=self._jitter,
            )
        except KeyboardInterrupt:
            raise LLMCancelledError("interrupted (Ctrl-C) while waiting for the model") from None

    def build_request(self, messages: list[dict[str, Any]],
                      tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The request body (without extra_body) that `chat` sends."""
        s = self.settings
        request: dict[str, Any] = {
            "model": s.model,
            "messages": prepare_messages(messages, s),
            "stream": True,
            s.max_tokens_field: s.max_output_tokens,
        }
        if self.stream_options_supported:
            request["stream_options"] = {"include_usage": True}
        if tools:
            request["tools"] = tools
        if s.temperature is not None:
            request["temperature"] = s.temperature
        return request

    def _attempt(self, request: dict[str, Any], on_delta: Callable[[StreamDelta], None] | None,
                 cancel: threading.Event | None) -> ChatResponse:
        try:
            return self._stream_once(request, on_delta, cancel)
        except BadRequestError as err:
            if "stream_options" not in request or not _STREAM_OPTIONS_REJECTED.search(
                f"{err.message} {err.body or ''}"
            ):
                raise
            log.info("server rejected stream_options; asking again without (usage may be zero)")
            self.stream_options_supported = False
            request.pop("stream_options")
            return self._stream_once(request, on_delta, cancel)

    def _stream_once(self, request: dict[str, Any], on_delta: Callable[[StreamDelta], None] | None,
                     cancel: threading.Event | None) -> ChatResponse:
        extra = dict(self.settings.extra_body) or None
        reader = _StreamReader(lambda: self._sdk.chat.completions.create(**request, extra_body=extra))
        assembler = StreamAssembler()
        finished = False
        try:
            for chunk in reader.chunks(cancel, assembler):
                _emit(assembler.feed(chunk), on_delta)
            finished = True
        finally:
            if not finished:
                reader.abandon()
        if assembler.finish_reason is not None:
            _emit(assembler.flush(), on_delta)
        response = assembler.result()
        s = self.settings
        response.usage.cost_usd = cost_usd(response.usage, s.price_prompt_per_mtok,
                                           s.price_completion_per_mtok)
        return response

    def _backoff(self, seconds: float, cancel: threading.Event | None) -> None:
        if self._sleep is None and cancel is not None:
            if cancel.wait(seconds):
                raise LLMCancelledError("cancelled while waiting to retry the model call")
            return
        (self._sleep or time.sleep)(seconds)
        if cancel is not None and cancel.is_set():
            raise LLMCancelledError("cancelled while waiting to retry the model call")


class _StreamReader:
    """Opens the stream and iterates it in a daemon thread, handing chunks over a queue.

    The caller's thread never blocks on the network, so it can honour cancel and
    Ctrl-C at once; `abandon()` closes the stream without waiting (from yet another
    daemon thread, since closing a response another thread is reading may block).
    """

    def __init__(self, open_stream: Callable[[], Any]) -> None:
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._stream: Any = None
        self._abandoned = threading.Event()
        threading.Thread(target=self._run, args=(open_stream,), daemon=True,
                         name="ctxagent-llm-stream").start()

    def _run(self, open_stream: Callable[[], Any]) -> None:
        try:
            self._stream = open_stream()
            for chunk in self._stream:
                if self._abandoned.is_set():
                    break
                self._queue.put(("chunk", chunk.to_dict()))
            self._queue.put(("end", None))
        except BaseException as exc:  # handed to the caller's thread, which decides
            self._queue.put(("error", exc))
        finally:
            if self._abandoned.is_set() and self._stream is not None:
                _close_quietly(self._stream)

    def chunks(self, cancel: threading.Event | None,
               assembler: StreamAssembler) -> Iterator[dict[str, Any]]:
        """Yield chunk dicts until the stream ends. Raises LLMCancelledError when `cancel`
        is set; a classified ProviderError for failures before the first chunk; a
        StreamInterruptedError for failures after it."""
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
                raise _stream_failure(value, assembler.chunks)

    def abandon(self) -> None:
        """Stop reading and close the stream in the background; never blocks."""
        self._abandoned.set()
        stream = self._stream
        if stream is not None:
            threading.Thread(target=_close_quietly, args=(stream,), daemon=True).start()


def _emit(deltas: list[StreamDelta], on_delta: Callable[[StreamDelta], None] | None) -> None:
    if on_delta is not None:
        for delta in deltas:
            on_delta(delta)


def _close_quietly(stream: Any) -> None:
    try:
        stream.close()
    except Exception:  # the connection is being abandoned; nothing useful to report
        log.debug("closing an abandoned stream failed", exc_info=True)


def _stream_failure(exc: BaseException, chunks_seen: int) -> BaseException:
    if isinstance(exc, ProviderError):
        return exc
    if not isinstance(exc, openai.OpenAIError):
        return exc
    err = classify_exception(exc)
    if chunks_seen == 0:
        return err
    return StreamInterruptedError(
        f"the model's reply stream broke after {chunks_seen} chunk(s): {err.message}",
        status=err.status, headers=err.headers, body=err.body,
    )
