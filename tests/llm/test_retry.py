"""The retry schedule: exponential bounds, full jitter, Retry-After parsing."""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxagent.llm.errors import BadRequestError, ServerError
from ctxagent.llm.retry import RetryPolicy, call_with_retries, parse_retry_after


@pytest.mark.parametrize("headers,expected", [
    ({"Retry-After": "2"}, 2.0), ({"retry-after": "0.5"}, 0.5), ({"RETRY-AFTER": " 7 "}, 7.0),
    ({"retry-after-ms": "250", "Retry-After": "9"}, 0.25), ({"Retry-After": "-4"}, 0.0),
    ({"Retry-After": "soon"}, None), ({"Retry-After": "nan"}, None), ({}, None),
    ({"Retry-After": ""}, None),
])
def test_parse_retry_after(headers, expected):
    assert parse_retry_after(headers) == expected


def test_parse_retry_after_http_date():
    now = 1_700_000_000.0
    assert parse_retry_after({"Retry-After": formatdate(now + 12, usegmt=True)}, now=now) == 12.0
    assert parse_retry_after({"Retry-After": formatdate(now - 60, usegmt=True)}, now=now) == 0.0


def test_backoff_bounds_double_from_half_a_second_up_to_the_cap():
    policy = RetryPolicy()
    assert [policy.backoff_bound(n) for n in range(8)] == [0.5, 1, 2, 4, 8, 16, 30, 30]


@given(retry=st.integers(0, 40))
def test_jittered_delay_is_within_zero_and_the_bound(retry):
    policy = RetryPolicy()
    delay = policy.delay(retry, ServerError("x"))
    assert 0.0 <= delay <= policy.backoff_bound(retry) <= 30.0


def test_call_with_retries_stops_at_non_retryable_and_counts_attempts():
    calls = []

    def attempt():
        calls.append(1)
        raise (ServerError("s", retryable=True) if len(calls) == 1 else BadRequestError("b"))

    with pytest.raises(BadRequestError) as info:
        call_with_retries(attempt, RetryPolicy(max_retries=5), sleep=lambda s: None)
    assert len(calls) == 2 and info.value.attempts == 2


def test_call_with_retries_lets_other_exceptions_through_untouched():
    def attempt():
        raise KeyError("bug")

    with pytest.raises(KeyError):
        call_with_retries(attempt, RetryPolicy(), sleep=lambda s: pytest.fail("slept"))


def test_zero_retries_means_one_attempt():
    calls = []

    def attempt():
        calls.append(time.monotonic())
        raise ServerError("s", retryable=True)

    with pytest.raises(ServerError):
        call_with_retries(attempt, RetryPolicy(max_retries=0), sleep=lambda s: None)
    assert len(calls) == 1
