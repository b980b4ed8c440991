"""Retry policy for model calls: exponential backoff with full jitter, honouring Retry-After.

Before retry n (0-based) wait `uniform(0, min(30, 0.5 * 2**n))` s ("full jitter", AWS Architecture
Blog, "Exponential Backoff And Jitter", 2015; case L02), or what the server asks (`retry-after-ms`,
`Retry-After` in seconds or an HTTP date, RFC 9110 10.2.3), up to `max_retry_after_s`. Only
errors flagged `retryable` (429, 5xx, 409, timeouts, connection errors) are retried. The sleep and
jitter are parameters so tests record the schedule; `on_retry` is told each wait before it starts
(a `RetryNotice`: "retrying (2/5) in 1.2 s"), so the user sees why nothing happens.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Callable, Mapping, TypeVar

from ctxagent.llm.errors import ProviderError

T = TypeVar("T")
log = logging.getLogger("ctxagent.llm")


def full_jitter(bound_s: float) -> float:
    """A uniformly random wait in [0, bound_s] seconds."""
    return random.uniform(0.0, bound_s)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait between attempts. All times in seconds."""

    max_retries: int = 4
    base_s: float = 0.5
    factor: float = 2.0
    cap_s: float = 30.0
    max_retry_after_s: float = 120.0

    def backoff_bound(self, retry: int) -> float:
        """Upper bound of the jittered wait before retry `retry` (0-based)."""
        return min(self.cap_s, self.base_s * self.factor**retry)

    def delay(self, retry: int, error: ProviderError,
              jitter: Callable[[float], float] = full_jitter) -> float | None:
        """Seconds to wait before retry `retry`, or None when the server asks for too long."""
        asked = parse_retry_after(error.headers)
        if asked is None:
            return jitter(self.backoff_bound(retry))
        return asked if asked <= self.max_retry_after_s else None


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait, or None if it did not say (or said nonsense).

    Reads `retry-after-ms` (milliseconds, OpenAI) first, then `retry-after` as seconds
    or an HTTP date (relative to `now`, a Unix time, default time.time()). Header names
    are matched case-insensitively; negative waits become 0.
    """
    lower = {k.lower(): v.strip() for k, v in headers.items()}
    millis = _number(lower.get("retry-after-ms"))
    if millis is not None:
        return max(0.0, millis / 1000.0)
    value = lower.get("retry-after")
    if not value:
        return None
    seconds = _number(value)
    if seconds is not None:
        return max(0.0, seconds)
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text else None
    except ValueError:
        return None
    return value if value is not None and value == value and value != float("inf") else None


@dataclass(frozen=True)
class RetryNotice:
    """One coming retry: `attempt` (the next attempt, from 2) of `attempts` at most, after `wait_s`
    seconds, because of `error` (the failed attempt's error)."""

    attempt: int
    attempts: int
    wait_s: float
    error: ProviderError

    def __str__(self) -> str:
        status = f" (HTTP {self.error.status})" if self.error.status is not None else ""
        return f"{self.error.message.rstrip('.')}{status}; retrying ({self.attempt}/{self.attempts}) in {self.wait_s:.1f} s"


def call_with_retries(
    attempt: Callable[[], T],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None] = time.sleep,
    jitter: Callable[[float], float] = full_jitter,
    on_retry: Callable[[RetryNotice], None] | None = None,
) -> T:
    """Call `attempt()` until it returns, retrying retryable ProviderErrors per `policy`;
    `on_retry(RetryNotice)` is called before each wait. Raises the last ProviderError (its
    `attempts` set) when it is not retryable, retries are used up, or the server asks for too
    long a wait; anything else `attempt` raises (cancellation included) passes at once."""
    retry = 0
    while True:
        try:
            return attempt()
        except ProviderError as err:
            err.attempts = retry + 1
            wait = policy.delay(retry, err, jitter) if err.retryable else None
            if wait is None or retry >= policy.max_retries:
                raise
            log.info("model call failed (%s); retry %d/%d in %.2f s",
                     type(err).__name__, retry + 1, policy.max_retries, wait)
            if on_retry is not None:
                on_retry(RetryNotice(retry + 2, policy.max_retries + 1, wait, err))
            sleep(wait)
            retry += 1
