"""Shared fixtures. Keep each fixture small; area fixtures go in tests/<area>/conftest.py."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

import pytest

from tests.support.extras import LOCAL_PACKAGES, LOCAL_REASON, installed
from tests.support.fake_openai import FakeOpenAI


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `local` (they need the `local` extra) are skipped, saying how to install it,
    where the extra is missing: the suite passes with `[dev]` alone."""
    if installed(*LOCAL_PACKAGES):
        return
    skip = pytest.mark.skip(reason=LOCAL_REASON)
    for item in items:
        if item.get_closest_marker("local") is not None:
            item.add_marker(skip)


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
