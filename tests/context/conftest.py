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


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--write-layouts`: rewrite tests/context/layouts/*.txt instead of comparing (test_layouts.py)."""
    parser.addoption("--write-layouts", action="store_true", default=False,
                     help="rewrite the golden request layouts in tests/context/layouts/")


@pytest.fixture
def write_layouts(request: pytest.FixtureRequest) -> bool:
    """True when the run was started with `--write-layouts`."""
    return bool(request.config.getoption("--write-layouts"))
