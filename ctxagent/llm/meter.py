"""Counting the model calls that tools and the context engine make beside the loop's own.

`MeteredClient` feeds a `UsageMeter` the loop adds to the turn before every limit check,
so `max_task_tokens` and `max_cost_usd` hold for plan and summary calls too.
`RecordedClient` tells a recorder of every call (docs/architecture.md, "The loop in detail").
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from ctxagent.llm.usage import Usage


class UsageMeter:
    """Usage gathered from side calls until the loop takes it (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending = Usage()

    def add(self, usage: Usage) -> None:
        """Count one call's usage."""
        with self._lock:
            self._pending = self._pending + usage

    def take(self) -> Usage:
        """The usage gathered since the last `take` (zeros if none), and start again."""
        with self._lock:
            taken, self._pending = self._pending, Usage()
        return taken


class MeteredClient:
    """A model client whose every `chat` reply's usage also goes to `meter`; any other
    attribute is the wrapped client's. A failed call raises as before and counts nothing
    (a server that fails sends no usage)."""

    def __init__(self, client: Any, meter: UsageMeter) -> None:
        self.client = client
        self.meter = meter

    def chat(self, *args: Any, **kwargs: Any) -> Any:
        """`client.chat(*args, **kwargs)`, with the reply's usage counted."""
        response = self.client.chat(*args, **kwargs)
        usage = getattr(response, "usage", None)
        if isinstance(usage, Usage):
            self.meter.add(usage)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)


#: `record(messages, tools, response, error)`: one call ended with `response` (error None)
#: or raised `error` (response None).
CallRecorder = Callable[[list, "list | None", Any, "Exception | None"], None]


class RecordedClient:
    """A model client that hands every `chat` call to `record` when it ends: the messages
    and tools it sent, and the reply or the exception (which is raised again after). Any
    other attribute is the wrapped client's. A recorder that raises on a successful call
    makes the call raise (a snapshot that cannot be written is an error, as for the loop's
    calls); on a failed call the call's own error is raised."""

    def __init__(self, client: Any, record: CallRecorder) -> None:
        self.client = client
        self.record = record

    def chat(self, messages: list, tools: list | None = None, **kwargs: Any) -> Any:
        """`client.chat(messages, tools, **kwargs)`, recorded."""
        try:
            response = self.client.chat(messages, tools, **kwargs)
        except Exception as exc:
            try:
                self.record(list(messages), tools, None, exc)
            except Exception:
                pass  # the call's own error says more than the recorder's
            raise
        self.record(list(messages), tools, response, None)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)
