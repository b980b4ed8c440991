"""Fixtures for the context_fetch tests: a copy of the small fixture repository."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURE_REPO = Path(__file__).resolve().parents[1] / "fixtures" / "fetch" / "repo"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh copy of tests/fixtures/fetch/repo (safe to modify)."""
    target = tmp_path / "repo"
    shutil.copytree(FIXTURE_REPO, target)
    return target
