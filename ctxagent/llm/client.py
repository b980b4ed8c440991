"""`LLMClient`: one streaming chat-completions call, with our retries, cancel and typed errors.

On the `openai` SDK with its retries off: backoff, Retry-After and the retry notices are ours
(`retry.py`), every SDK exception goes through the table in `errors.py`, and the reply is read in
a daemon thread (`reader.py`) so cancel and Ctrl-C act at once. A server that rejects
stream_options is asked again without, once. Retried: 429, 5xx, 409, timeouts and connection
errors before the first chunk. An empty reply is an EmptyReplyError, one that is no completion an
UnexpectedReplyError; errors name the endpoint (`endpoint_errors.py`). docs/providers.md tells all.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import Any, Callable

import openai

from ctxagent.llm.cache_marks import mark_stable_prefix
from ctxagent.llm.endpoint_errors import for_endpoint
from ctxagent.llm.errors import (
    BadRequestError,
    EmptyReplyError,
    LLMCancelledError,
    ProviderError,
    UnexpectedReplyError,
)
from ctxagent.llm.messages import ChatResponse, StreamDelta, ToolCall, prepare_messages
from ctxagent.llm.plain_reply import quoted
from ctxagent.llm.presets import resolve_api_key, resolve_base_url
from ctxagent.llm.prices import prices_for
from ctxagent.llm.reader import ReplyReader
from ctxagent.llm.retry import RetryNotice, RetryPolicy, call_with_retries, full_jitter
from ctxagent.llm.settings import ModelSettings
from ctxagent.llm.stream import StreamAssembler
from ctxagent.llm.usage import Usage, cost_usd
from ctxagent.redaction import redact

__all__ = ["ChatResponse", "LLMClient", "RetryNotice", "StreamDelta", "ToolCall", "Usage"]

log = logging.getLogger("ctxagent.llm")
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
        on_retry: Callable[[RetryNotice], None] | None = None,
        tool_choice: str | None = None,
    ) -> ChatResponse:
        """Send `messages` (OpenAI chat dicts, not mutated) and `tools` (schemas, as given); return
        the reply. `on_delta`: each fragment as it arrives, in the caller's thread; `cancel`: stops
        at once; `on_retry`: told before each backoff wait; `tool_choice` ("none": text only) goes
        with the tools. Raises a ProviderError subclass (ctxagent.llm.errors: EmptyReplyError,
        UnexpectedReplyError...) or LLMCancelledError (cancel, Ctrl-C)."""
        request = self.build_request(messages, tools)
        if tools and tool_choice:
            request["tool_choice"] = tool_choice
        log.debug("chat: model=%s messages=%d tools=%d", self.settings.model,
                  len(messages), len(tools or []))
        try:
            return call_with_retries(
                lambda: self._attempt(request, on_delta, cancel),
                self._policy,
                sleep=lambda seconds: self._backoff(seconds, cancel),
                jitter=self._jitter,
                on_retry=on_retry,
            )
        except KeyboardInterrupt:
            raise LLMCancelledError("interrupted (Ctrl-C) while waiting for the model") from None

    def build_request(self, messages: list[dict[str, Any]],
                      tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The request body (without extra_body) that `chat` sends."""
        s = self.settings
        wire = prepare_messages(messages, s)
        request: dict[str, Any] = {
            "model": s.model,
            "messages": mark_stable_prefix(wire) if s.cache_control else wire,
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
        except ProviderError as err:
            self._explained(err)
            raise

    def _explained(self, err: ProviderError) -> ProviderError:
        """`err` told for this endpoint (URL, key variables), with the key redacted from quoted replies."""
        if isinstance(err, UnexpectedReplyError):
            key = self.settings.api_key.get_secret_value() if self.settings.api_key is not None else ""
            err.message = redact(err.message, [key] if key else [])
        return for_endpoint(err, self.settings, self.base_url)

    def _stream_once(self, request: dict[str, Any], on_delta: Callable[[StreamDelta], None] | None,
                     cancel: threading.Event | None) -> ChatResponse:
        extra = dict(self.settings.extra_body) or None
        reader = ReplyReader(lambda: self._sdk.chat.completions.create(**request, extra_body=extra), self.base_url)
        assembler = StreamAssembler()
        finished = False
        try:
            for chunk in reader.chunks(cancel, lambda: assembler.chunks):
                _emit(_feed(assembler, chunk), on_delta)
            finished = True
        finally:
            if not finished:
                reader.abandon()
        if assembler.finish_reason is not None:
            _emit(assembler.flush(), on_delta)
        response = assembler.result()
        _check_not_empty(response, self.settings)
        response.usage.cost_usd = cost_usd(response.usage, prices_for(self.settings))
        return response

    def _backoff(self, seconds: float, cancel: threading.Event | None) -> None:
        if self._sleep is None and cancel is not None:
            if cancel.wait(seconds):
                raise LLMCancelledError("cancelled while waiting to retry the model call")
            return
        (self._sleep or time.sleep)(seconds)
        if cancel is not None and cancel.is_set():
            raise LLMCancelledError("cancelled while waiting to retry the model call")


def _emit(deltas: list[StreamDelta], on_delta: Callable[[StreamDelta], None] | None) -> None:
    if on_delta is not None:
        for delta in deltas:
            on_delta(delta)


def _feed(assembler: StreamAssembler, chunk: dict[str, Any]) -> list[StreamDelta]:
    """`assembler.feed(chunk)`; a chunk of the wrong shape (a string for a delta...) is an UnexpectedReplyError."""
    try:
        return assembler.feed(chunk)
    except (AttributeError, TypeError, ValueError, KeyError) as exc:
        raise UnexpectedReplyError(f"the server sent a stream chunk of the wrong shape ({exc}): {quoted(chunk)}") from None


def _check_not_empty(response: ChatResponse, settings: ModelSettings) -> None:
    """Raise EmptyReplyError when `response` has neither text nor a tool call (issue 15, item 8)."""
    if response.tool_calls or (response.content or "").strip():
        return
    reason = response.finish_reason
    if reason == "length":
        raise EmptyReplyError(
            f"the model's reply was cut at model.max_output_tokens = {settings.max_output_tokens} before any text "
            f"or tool call{' (it spent them reasoning)' if response.reasoning_content else ''}",
            hint="Raise model.max_output_tokens, or ask for less at once.")
    if reason == "content_filter":
        raise EmptyReplyError("the provider's content filter withheld the model's reply (finish_reason "
                              "'content_filter')", hint="Rephrase the request.")
    only = " (it only reasoned)" if response.reasoning_content else ""
    raise EmptyReplyError(f"the model returned an empty reply: no text and no tool call{only}, "
                          f"finish_reason {reason!r}")
