"""`LocalServerClient`: the `LLMClient` for the bundled offline model, explaining a failed request with the server's log.

A connection error, an interrupted stream or a server error becomes a `LocalServerError`
quoting the server log (a `ContextLengthError` for a prompt too long); timeouts and
cancels pass through (breaker F15; docs/local-model.md, "How it works": failures carry the server log).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from ctxagent.errors import LLMError
from ctxagent.llm.client import LLMClient
from ctxagent.llm.errors import (
    ContextLengthError,
    LLMConnectionError,
    LLMTimeoutError,
    ServerError,
    StreamInterruptedError,
    _says_context_too_long,
)
from ctxagent.llm.local.server import LocalServer, LocalServerError
from ctxagent.llm.messages import ChatResponse, StreamDelta

QUIET_S = 0.3
"""Seconds without new log output after which the server is taken to have finished
writing about a failure (its traceback lands a moment after the stream ends)."""
SETTLE_MAX_S = 3.0
"""Most seconds to wait for that log output before reporting what is there."""
TAIL_LINES, TAIL_CHARS = 20, 3000
_FAILURES = (LLMConnectionError, StreamInterruptedError, ServerError)


class LocalServerClient(LLMClient):
    """An LLMClient on `server` (started) whose failed requests carry the server's log.

    `chat` raises what LLMClient.chat raises, except that LLMConnectionError (not its timeout subclass),
    StreamInterruptedError and ServerError become LocalServerError (ContextLengthError when the log says the
    prompt exceeds the context) quoting the server's log, without advice to retry (docs/local-model.md).
    """

    def __init__(self, server: LocalServer, **kwargs: Any) -> None:
        super().__init__(server.settings(), **kwargs)
        self.server = server

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, *,
             on_delta: Callable[[StreamDelta], None] | None = None,
             cancel: threading.Event | None = None, on_retry: Callable[[Any], None] | None = None,
             tool_choice: str | None = None) -> ChatResponse:
        """LLMClient.chat, with server failures explained (see the class doc)."""
        mark = self.server.log_size()
        try:
            return super().chat(messages, tools, on_delta=on_delta, cancel=cancel, on_retry=on_retry,
                                tool_choice=tool_choice)
        except _FAILURES as exc:
            if isinstance(exc, LLMTimeoutError):
                raise
            raise explain_failure(self.server, exc, since=mark) from exc


def explain_failure(server: LocalServer, exc: LLMError, *, since: int = 0) -> LLMError:
    """The error to show for request failure `exc` on `server`, quoting its log from byte
    `since` (waits up to SETTLE_MAX_S seconds for the server to finish writing it)."""
    new = _settled_log(server, since)
    tail = (f"Server log, what it wrote about this request:\n{_tail(new)}" if _tail(new) else
            f"The server wrote nothing about this request; its log ends:\n{_tail(server.log_text()) or '(empty)'}")
    what = getattr(exc, "message", str(exc)).rstrip(".")
    if _says_context_too_long(new):
        return ContextLengthError(f"the prompt is longer than the offline model's context ({what}); compact "
                                  f"the conversation or start a new one. {tail}", hint="")
    code = server.exit_code
    if code is None:
        state = ("the server is still running, but this is not a network problem: the same request "
                 "would fail the same way")
    else:
        state = (f"the server exited with code {code}, so this session cannot go on with the offline "
                 "model; start ctxagent again (`--resume last` keeps the conversation)")
    return LocalServerError(
        f"the offline model server failed on this request ({what}); {state}. {tail}\n"
        'If the log shows llama.cpp crashing, rebuild it with CMAKE_ARGS="-DGGML_NATIVE=OFF" '
        "(docs/local-model.md); for real work configure a provider (`ctxagent doctor`)."
    )


def _settled_log(server: LocalServer, since: int) -> str:
    """The log from `since` once the server has stopped writing: new output followed by
    QUIET_S seconds of none, or the process gone, or SETTLE_MAX_S seconds."""
    start = last_change = time.monotonic()
    size = server.log_size()
    while time.monotonic() - start < SETTLE_MAX_S:
        now_size = server.log_size()
        if now_size != size:
            size, last_change = now_size, time.monotonic()
        elif (size > since or server.exit_code is not None) and time.monotonic() - last_change >= QUIET_S:
            break
        time.sleep(0.05)
    return server.log_text(since)


def _tail(text: str) -> str:
    return "\n".join(text.strip().splitlines()[-TAIL_LINES:])[-TAIL_CHARS:]
