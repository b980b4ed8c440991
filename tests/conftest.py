"""Shared fixtures. Keep each fixture small; area fixtures go in tests/<area>/conftest.py."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

import pytest

from tests.support.fake_openai import FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[Callable[..., FakeOpenAI]]:
    """Factory `start(script, **opts) -> FakeOpenAI` (already serving; `.base_url`).

    Every server started through it is stopped at teardown.
    """
    servers: list[FakeOpenAI] = []

    def start(script: Iterable[dict[str, Any]] = (), **opts: Any) -> FakeOpenAI:
        server = FakeOpenAI(script, **opts)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
