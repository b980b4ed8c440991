"""Case L02: rate limits and server errors, against the fake server over real HTTP."""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest

from ctxagent.llm.errors import (
    AuthenticationError,
    BadRequestError,
    ContextLengthError,
    LLMConnectionError,
    ModelNotFoundError,
    RateLimitError,
    ServerError,
)
from tests.llm.conftest import USER
from tests.support.fake_openai import error, text


def test_L02_retry_after_1_then_200_waits_at_least_a_second(fake_openai, make_client):
    server = fake_openai([error(429, headers={"Retry-After": "1"}), text("ok")])
    client = make_client(server)
    start = time.monotonic()
    reply = client.chat(USER)
    elapsed = time.monotonic() - start
    assert reply.content == "ok"
    assert len(server.requests) == 2
    assert elapsed >= 0.95  # lower bound only: the server asked for 1 s


def test_L02_retry_after_is_used_instead_of_backoff(fake_openai, make_client):
    slept: list[float] = []
    server = fake_openai([error(429, headers={"Retry-After": "2"}),
                          error(429, headers={"retry-after-ms": "1500"}), text("ok")])
    client = make_client(server, sleep=slept.append)
    assert client.chat(USER).content == "ok"
    assert slept == [2.0, 1.5]


def test_L02_retry_after_http_date_is_honoured(fake_openai, make_client):
    slept: list[float] = []
    when = formatdate(time.time() + 30, usegmt=True)
    server = fake_openai([error(503, headers={"Retry-After": when}), text("ok")])
    make_client(server, sleep=slept.append).chat(USER)
    assert len(slept) == 1 and 25 <= slept[0] <= 31


def test_L02_429_every_time_raises_typed_error_with_status_headers_body(fake_openai, make_client):
    body = {"error": {"message": "Rate limit reached for requests", "type": "requests",
                      "code": "rate_limit_exceeded"}}
    steps = [error(429, body=body, headers={"Retry-After": "0", "X-Req": "r1"}) for _ in range(5)]
    server = fake_openai(steps)
    client = make_client(server, max_retries=2, sleep=lambda s: None)
    with pytest.raises(RateLimitError) as info:
        client.chat(USER)
    err = info.value
    assert len(server.requests) == 3  # 1 + 2 retries
    assert err.status == 429 and err.retryable and err.attempts == 3
    assert err.headers["retry-after"] == "0" and err.headers["x-req"] == "r1"
    assert "rate_limit_exceeded" in err.body
    assert "Rate limit reached" in str(err) and "HTTP 429" in str(err)


def test_L02_503_503_200_backs_off_with_growing_gaps(fake_openai, make_client):
    slept: list[float] = []
    server = fake_openai([error(503), error(503), text("ok")])
    client = make_client(server, sleep=slept.append, jitter=lambda bound: bound)
    assert client.chat(USER).content == "ok"
    assert slept == [0.5, 1.0]  # base 0.5 s, factor 2 (jitter pinned to its upper bound)


def test_L02_jittered_gaps_stay_within_the_exponential_bounds(fake_openai, make_client):
    slept: list[float] = []
    server = fake_openai([error(500), error(502), error(503), error(504), text("ok")])
    make_client(server, sleep=slept.append).chat(USER)
    assert len(slept) == 4
    for n, gap in enumerate(slept):
        assert 0.0 <= gap <= 0.5 * 2**n


@pytest.mark.parametrize("status,exc", [
    (400, BadRequestError), (401, AuthenticationError), (403, AuthenticationError),
    (404, ModelNotFoundError), (422, BadRequestError),
])
def test_L02_client_errors_are_never_retried(fake_openai, make_client, status, exc):
    server = fake_openai([error(status), text("should not be reached")])
    with pytest.raises(exc) as info:
        make_client(server, sleep=lambda s: None).chat(USER)
    assert len(server.requests) == 1
    assert info.value.status == status and not info.value.retryable and info.value.hint


def test_L02_invalid_request_error_400_not_retried(fake_openai, make_client):
    body = {"error": {"message": "Invalid 'messages[1].role'", "type": "invalid_request_error",
                      "param": "messages", "code": None}}
    server = fake_openai([error(400, body=body)])
    with pytest.raises(BadRequestError) as info:
        make_client(server, sleep=lambda s: None).chat(USER)
    assert not isinstance(info.value, ContextLengthError)
    assert len(server.requests) == 1
    assert "invalid_request_error" in info.value.body


@pytest.mark.parametrize("body", [
    {"error": {"message": "This model's maximum context length is 8192 tokens. However, you "
               "requested 9000 tokens.", "type": "invalid_request_error", "code": "context_length_exceeded"}},
    {"error": {"message": "bad", "type": "invalid_request_error", "code": "context_length_exceeded"}},
    {"error": {"message": "the request exceeds the available context size, try increasing it",
               "type": "exceed_context_size_error"}},  # llama.cpp
    {"error": {"message": "prompt is too long: 210000 tokens > 200000 maximum"}},
    {"object": "error", "message": "This model's maximum context length is 32768 tokens.",
     "type": "BadRequestError"},  # vLLM
    "Range of input length should be [1, 30720]",  # DashScope, plain text
])
def test_L02_context_length_400_becomes_ContextLengthError(fake_openai, make_client, body):
    server = fake_openai([error(400, body=body)])
    with pytest.raises(ContextLengthError) as info:
        make_client(server, sleep=lambda s: None).chat(USER)
    assert len(server.requests) == 1 and info.value.status == 400
    assert isinstance(info.value, BadRequestError)  # callers catching BadRequestError still do


def test_L02_exhausted_quota_429_is_not_retried(fake_openai, make_client):
    body = {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota",
                      "code": "insufficient_quota"}}
    server = fake_openai([error(429, body=body), text("no")])
    with pytest.raises(RateLimitError) as info:
        make_client(server, sleep=lambda s: None).chat(USER)
    assert len(server.requests) == 1 and not info.value.retryable and "credit" in info.value.hint


def test_L02_too_long_retry_after_is_not_waited_for(fake_openai, make_client):
    slept: list[float] = []
    server = fake_openai([error(429, headers={"Retry-After": "3600"}), text("no")])
    with pytest.raises(RateLimitError):
        make_client(server, sleep=slept.append).chat(USER)
    assert slept == [] and len(server.requests) == 1


def test_L02_connection_refused_is_retried_then_typed(fake_openai, make_client):
    server = fake_openai()
    client = make_client(server, max_retries=2, sleep=lambda s: None)
    server.stop()
    with pytest.raises(LLMConnectionError) as info:
        client.chat(USER)
    assert info.value.attempts == 3 and info.value.retryable and "base_url" in info.value.hint


def test_server_errors_exhausting_retries_raise_ServerError(fake_openai, make_client):
    server = fake_openai([error(500) for _ in range(3)])
    with pytest.raises(ServerError) as info:
        make_client(server, max_retries=1, sleep=lambda s: None).chat(USER)
    assert len(server.requests) == 2 and info.value.status == 500


def test_stream_options_rejected_is_retried_once_without_and_remembered(fake_openai, make_client):
    body = {"error": {"message": "Unrecognized request argument supplied: stream_options",
                      "type": "invalid_request_error"}}
    server = fake_openai([error(400, body=body), text("one"), text("two")])
    client = make_client(server, sleep=lambda s: None)
    assert client.chat(USER).content == "one"
    assert client.chat(USER).content == "two"
    assert "stream_options" in server.requests[0]
    assert "stream_options" not in server.requests[1] and "stream_options" not in server.requests[2]
    assert client.chat(USER).usage.prompt_tokens == 0  # no usage without stream_options: zeros


def test_L02_timeout_before_the_first_chunk_is_retried(fake_openai, make_client):
    # The timeout leaves the fast reply seconds to arrive even on a loaded machine; the slow one never does.
    server = fake_openai([text("too slow", delay=60), text("fast")])
    reply = make_client(server, timeout_s=2.0, sleep=lambda s: None).chat(USER)
    assert reply.content == "fast" and len(server.requests) == 2


def test_L02_timeouts_exhausting_retries_raise_LLMTimeoutError(fake_openai, make_client):
    from ctxagent.llm.errors import LLMTimeoutError

    server = fake_openai([text("slow", delay=5), text("slow", delay=5)])
    with pytest.raises(LLMTimeoutError) as info:
        make_client(server, timeout_s=0.2, max_retries=1, sleep=lambda s: None).chat(USER)
    assert info.value.attempts == 2 and "timeout_s" in info.value.hint
