"""Fixtures of the context tests."""

from __future__ import annotations

from typing import Iterator

import pytest

from ctxagent.context import select, textstats


@pytest.fixture(scope="module", params=["compiled", "python"])
def analysis_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """Runs each test of a module on both paths of `textstats.analyse`: the compiled scanner
    (skipped where it was not built) and pure Python; restores the path in use before."""
    was_compiled = textstats.compiled_in_use()
    select.sketch.cache_clear()  # computed by the path in use: start each path afresh
    if request.param == "compiled" and not textstats.use_compiled(True):
        pytest.skip("the compiled scanner (ctxagent.context._chunkscan) is not built here")
    if request.param == "python":
        textstats.use_compiled(False)
    yield request.param
    textstats.use_compiled(was_compiled)
    select.sketch.cache_clear()
