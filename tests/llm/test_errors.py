"""The one error table: SDK exceptions -> our typed errors, in one place."""

from __future__ import annotations

import httpx2
import openai
import pytest

from ctxagent.errors import LLMError
from ctxagent.llm import errors as E
from ctxagent.llm.errors import ERROR_TABLE, classify_exception, sdk_errors_missing_from_table

REQUEST = httpx2.Request("POST", "http://127.0.0.1:1/v1/chat/completions")


def _status_error(status: int, body: dict | None = None, headers: dict | None = None):
    response = httpx2.Response(status, json=body or {"error": {"message": "m"}},
                               headers=headers or {}, request=REQUEST)
    cls = {400: openai.BadRequestError, 429: openai.RateLimitError}.get(status, openai.APIStatusError)
    return cls("m", response=response, body=(body or {}).get("error"))


def test_every_sdk_http_error_has_a_row_in_the_table():
    assert sdk_errors_missing_from_table() == []


def test_every_row_maps_to_an_LLMError_with_a_hint():
    for sdk_cls, rule in ERROR_TABLE.items():
        assert issubclass(rule.error, LLMError), sdk_cls
        assert rule.hint, sdk_cls


@pytest.mark.parametrize("status,cls,retryable", [
    (408, E.LLMTimeoutError, True), (413, E.ContextLengthError, False),
    (418, E.BadRequestError, False), (520, E.ServerError, True),
])
def test_statuses_without_their_own_sdk_class(status, cls, retryable):
    err = classify_exception(_status_error(status))
    assert type(err) is cls and err.retryable is retryable and err.status == status


def test_classified_error_carries_headers_lowercased_and_body():
    err = classify_exception(_status_error(429, {"error": {"message": "slow down"}}, {"Retry-After": "3"}))
    assert isinstance(err, E.RateLimitError) and err.headers["retry-after"] == "3"
    assert "slow down" in err.body


def test_connection_and_timeout_errors():
    assert type(classify_exception(openai.APIConnectionError(request=REQUEST))) is E.LLMConnectionError
    timeout = classify_exception(openai.APITimeoutError(request=REQUEST))
    assert isinstance(timeout, E.LLMConnectionError) and timeout.retryable and "timeout_s" in timeout.hint


def test_error_event_inside_the_stream_is_a_retryable_server_error():
    err = classify_exception(openai.APIError("overloaded", REQUEST, body={"message": "overloaded"}))
    assert type(err) is E.ServerError and err.retryable and "overloaded" in err.body


def test_unknown_sdk_subclass_inherits_its_parents_rule():
    class NewRateLimit(openai.RateLimitError):
        pass

    response = httpx2.Response(429, json={}, request=REQUEST)
    assert type(classify_exception(NewRateLimit("m", response=response, body=None))) is E.RateLimitError


def test_all_our_errors_have_the_common_fields():
    for cls in (E.RateLimitError, E.ServerError, E.BadRequestError, E.ContextLengthError,
                E.AuthenticationError, E.ModelNotFoundError, E.LLMConnectionError,
                E.StreamInterruptedError, E.LLMCancelledError):
        err = cls("x")
        assert isinstance(err, LLMError)
        assert err.status is None and err.headers == {} and err.body is None


@pytest.mark.parametrize("status, body", [
    (400, {"error": {"message": "registry.ollama.ai/library/deepseek-r1:8b does not support tools",
                     "type": "api_error"}}),  # Ollama's OpenAI-compatible endpoint
    (400, {"error": "glm4 does not support tools"}),  # Ollama's own error shape
    (500, {"error": {"code": 500, "message": "tools param requires --jinja flag", "type": "server_error"}}),
    (400, {"object": "error", "message": '"auto" tool choice requires --enable-auto-tool-choice and '
           "--tool-call-parser to be set", "type": "BadRequestError", "code": 400}),  # vLLM
])
def test_a_server_refusing_tools_is_not_retried(status, body):
    err = classify_exception(_status_error(status, body))
    assert type(err) is E.ToolsUnsupportedError and not err.retryable and "protocol" in err.hint


def test_other_bad_requests_are_not_taken_for_a_tools_refusal():
    err = classify_exception(_status_error(400, {"error": {"message": "unknown field: tools_x"}}))
    assert type(err) is E.BadRequestError
