"""Typed model-endpoint errors and the ONE table that maps SDK exceptions onto them.

Each error (an `ctxagent.errors.LLMError`) carries `status`, `headers`, `body`,
`retryable` and `hint`. `ERROR_TABLE` (after Aider's `exceptions.py`) maps SDK classes;
`classify_exception` walks the MRO; text refinements give `ContextLengthError` and
`ToolsUnsupportedError`. Table: docs/providers.md ("Streaming, retries and errors").
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

import openai

from ctxagent.errors import LLMError


class ProviderError(LLMError):
    """A model call failed. Fields: status, headers, body, retryable, hint (see module doc),
    and attempts (how many requests were made, set by the retry loop)."""

    default_hint = ""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        headers: dict[str, str] | None = None,
        body: str | None = None,
        retryable: bool = False,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.headers = dict(headers or {})
        self.body = body
        self.retryable = retryable
        self.hint = self.default_hint if hint is None else hint
        self.attempts = 1

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status is not None else ""
        hint = f" {self.hint}" if self.hint else ""
        return f"{self.message.rstrip('.')}{status}.{hint}"


class RateLimitError(ProviderError):
    """429: too many requests or tokens per minute (retried), or quota exhausted (not)."""


class ServerError(ProviderError):
    """5xx, 409, or an error event inside the stream: the server failed (retried)."""


class BadRequestError(ProviderError):
    """400/422: the server rejected the request itself (never retried)."""


class ContextLengthError(BadRequestError):
    """A 400 saying the prompt is longer than the model's context: compact and retry once."""


class ToolsUnsupportedError(BadRequestError):
    """The server refused the `tools` parameter: the model or server has no native tool
    calling (Ollama: "does not support tools"; llama.cpp: "tools param requires --jinja
    flag"; vLLM: "tool choice requires --enable-auto-tool-choice"). Never retried; the loop
    switches the session to a text protocol."""

    default_hint = "Use a text protocol: [model] protocol = \"xml\" or --protocol xml."


class AuthenticationError(ProviderError):
    """401/403: the key is missing, wrong, or lacks access to this model."""


class ModelNotFoundError(ProviderError):
    """404: no such model, or the base URL is not an OpenAI-compatible root."""


class LLMConnectionError(ProviderError):
    """The server could not be reached or the connection broke before a reply (retried)."""


class LLMTimeoutError(LLMConnectionError):
    """No answer (or no next stream chunk) within settings.timeout_s (retried)."""


class StreamInterruptedError(ProviderError):
    """The stream ended before a finish_reason; nothing from it is returned (case L03)."""

    default_hint = "Nothing from the partial reply was used; send the request again."


class UnexpectedReplyError(ProviderError):
    """The server answered 200 with something that is not an OpenAI chat completion: stream data
    that is not JSON, a chunk of the wrong shape, an HTML page (never retried: it will answer the
    same again). The message quotes what it sent, redacted and cut."""

    default_hint = ("Check model.base_url: it must be an OpenAI-compatible root (usually ending in /v1); "
                    "`ctxagent doctor` checks it.")


class EmptyReplyError(ProviderError):
    """The model answered with neither text nor a tool call (never retried; docs/providers.md)."""

    default_hint = "Send the request again, rephrase it, or try another model."


class LLMCancelledError(ProviderError):
    """The cancel event was set or Ctrl-C was pressed while the model was answering."""


class ErrorRule(NamedTuple):
    """One row of the table: which error to raise, whether to retry, what to tell the user."""

    error: type[ProviderError]
    retryable: bool
    hint: str


_KEY_HINT = ("Check the API key (OPENAI_API_KEY, DEEPSEEK_API_KEY, DASHSCOPE_API_KEY or "
             "model.api_key) and that it is valid for this endpoint.")

ERROR_TABLE: dict[type[openai.OpenAIError], ErrorRule] = {
    # SDK exception: ErrorRule(our error, retryable, hint for the user)
    openai.BadRequestError: ErrorRule(
        BadRequestError, False,
        "The server rejected the request; see the body for the field it names."),
    openai.AuthenticationError: ErrorRule(
        AuthenticationError, False, _KEY_HINT),
    openai.OAuthError: ErrorRule(
        AuthenticationError, False, _KEY_HINT),
    openai.PermissionDeniedError: ErrorRule(
        AuthenticationError, False,
        "The key has no access to this model or region; check the account or pick another model."),
    openai.NotFoundError: ErrorRule(
        ModelNotFoundError, False,
        "Check model.model (the server's exact model name) and model.base_url (it usually "
        "ends in /v1); `ctxagent doctor` lists the models."),
    openai.ConflictError: ErrorRule(
        ServerError, True,
        "The server reported a conflict; retrying."),
    openai.UnprocessableEntityError: ErrorRule(
        BadRequestError, False,
        "The server could not process the request; see the body for the field it names."),
    openai.RateLimitError: ErrorRule(
        RateLimitError, True,
        "Rate limited: wait a minute, lower the request rate, or raise the account's limits."),
    openai.InternalServerError: ErrorRule(
        ServerError, True,
        "The provider had a server error; try again later."),
    openai.APIStatusError: ErrorRule(
        BadRequestError, False,
        "The server answered with an unexpected HTTP status."),
    openai.APITimeoutError: ErrorRule(
        LLMTimeoutError, True,
        "The server did not answer in time; raise model.timeout_s for slow local models."),
    openai.APIConnectionError: ErrorRule(
        LLMConnectionError, True,
        "Check model.base_url and that the server is running (`ctxagent doctor`)."),
    openai.APIResponseValidationError: ErrorRule(
        ServerError, False,
        "The server's reply was not valid OpenAI JSON; is base_url an OpenAI-compatible endpoint?"),
    openai.APIError: ErrorRule(
        ServerError, True,
        "The server reported an error in the stream; try again."),
    openai.OpenAIError: ErrorRule(
        ProviderError, False,
        "The OpenAI SDK failed; see the message."),
}

_CONTEXT_LENGTH_PATTERNS = re.compile(
    r"context_length_exceeded|maximum context length|context length|context window|"
    r"too many tokens|prompt is too long|exceeds? the (?:available )?context|context size|"
    r"input length|reduce the length|exceed_context_size",
    re.IGNORECASE,
)
#: What servers answer when they cannot take the `tools` parameter (see ToolsUnsupportedError).
_TOOLS_UNSUPPORTED = re.compile(
    r"does not support tools|does not support tool (?:use|calling|calls)|tools param requires --jinja|"
    r"tool choice requires --enable-auto-tool-choice",
    re.IGNORECASE,
)
#: A 400 that means "no such model" (DeepSeek: "Model Not Exist"; vLLM, Ollama, OpenAI's own words).
_MODEL_UNKNOWN = re.compile(
    r"model[ _]not[ _]exist|model_not_found|model .{0,80}?(?:does not exist|not found|is not (?:found|available|served))|"
    r"(?:unknown|invalid|no such) model",
    re.IGNORECASE,
)
#: The SDK's own prefix of a status error's message; the status is said once, as "(HTTP 404)".
_SDK_PREFIX = re.compile(r"^Error code: \d{3} - ")
_BODY_LIMIT = 4000
_STATUS_FALLBACK = {408: ErrorRule(LLMTimeoutError, True, "The server timed out the request; retrying."),
                    413: ErrorRule(ContextLengthError, False, "The request is too large for the server.")}


def rule_for(exc: BaseException) -> ErrorRule:
    """The table row for `exc`: its own class, else the nearest listed base class."""
    for cls in type(exc).__mro__:
        rule = ERROR_TABLE.get(cls)  # type: ignore[call-overload]
        if rule is not None:
            return rule
    return ErrorRule(ProviderError, False, "Unexpected error calling the model.")


def classify_exception(exc: BaseException) -> ProviderError:
    """Turn an SDK exception into our typed error, with status, headers and body.

    Pure: never raises, never logs. Context-length 400s become ContextLengthError; an
    exhausted-quota 429 becomes a non-retryable RateLimitError.
    """
    rule = rule_for(exc)
    status = getattr(exc, "status_code", None) if isinstance(exc, openai.APIStatusError) else None
    if type(exc) is openai.APIStatusError and status in _STATUS_FALLBACK:
        rule = _STATUS_FALLBACK[status]
    elif type(exc) is openai.APIStatusError and status is not None and status >= 500:
        rule = ERROR_TABLE[openai.InternalServerError]
    headers, body = _response_parts(exc)
    message = _summary(exc)
    in_stream = status is None and not isinstance(exc, openai.APIConnectionError)
    if (status in (400, 413, 422) or in_stream) and _says_context_too_long(f"{message} {body or ''}"):
        rule = ErrorRule(ContextLengthError, False,
                         "The conversation is longer than the model's context; compact it.")
    elif status in (400, 422, 500) and _TOOLS_UNSUPPORTED.search(f"{message} {body or ''}"):
        rule = ErrorRule(ToolsUnsupportedError, False, ToolsUnsupportedError.default_hint)
    elif status in (400, 422) and _MODEL_UNKNOWN.search(f"{message} {body or ''}"):
        rule = ERROR_TABLE[openai.NotFoundError]  # DeepSeek and others answer an unknown model with a 400
    elif rule.error is RateLimitError and "insufficient_quota" in f"{body or ''} {getattr(exc, 'code', '')}":
        rule = ErrorRule(RateLimitError, False,
                         "The account's quota is used up: add credit or use another key.")
    return rule.error(message, status=status, headers=headers, body=body,
                      retryable=rule.retryable, hint=rule.hint)


def _response_parts(exc: BaseException) -> tuple[dict[str, str], str | None]:
    response = getattr(exc, "response", None) if isinstance(exc, openai.APIStatusError) else None
    headers = {k.lower(): v for k, v in response.headers.items()} if response is not None else {}
    body: str | None = None
    if response is not None:
        try:
            body = response.text
        except Exception:  # body not read (stream) or undecodable; fall back to the parsed body
            body = None
    if body is None and getattr(exc, "body", None) is not None:
        raw = exc.body  # type: ignore[attr-defined]
        body = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)
    return headers, (body[:_BODY_LIMIT] if body else body)


def _summary(exc: BaseException) -> str:
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return _SDK_PREFIX.sub("", " ".join(str(text).split()))[:500]


def _says_context_too_long(text: str) -> bool:
    return bool(_CONTEXT_LENGTH_PATTERNS.search(text))


def sdk_errors_missing_from_table() -> list[type]:
    """SDK HTTP error classes (subclasses of openai.APIError) with no explicit table row."""
    import inspect

    import openai._exceptions as sdk

    return [
        cls for cls in vars(sdk).values()
        if inspect.isclass(cls) and issubclass(cls, openai.APIError) and cls not in ERROR_TABLE
    ]
