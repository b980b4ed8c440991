"""Fixtures of the context tests."""

from __future__ import annotations

from typing import Iterator

import pytest

from ctxagent.context import select
from ctxagent.text import statistics as textstats


@pytest.fixture(autouse=True)
def cold_caches() -> Iterator[None]:
    """Each test starts and ends with empty text caches (what it learns stays its own)."""
    textstats.clear_caches()
    select.sketch.cache_clear()
    yield
    textstats.clear_caches()
    select.sketch.cache_clear()
