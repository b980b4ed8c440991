"""Helpers for the patch tests: a workspace folder and a patch-envelope builder."""

from __future__ import annotations

from pathlib import Path

import pytest


def envelope(body: str) -> str:
    """`body` wrapped in `*** Begin Patch` / `*** End Patch`."""
    return f"*** Begin Patch\n{body}*** End Patch\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """An empty workspace folder."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


def snapshot(root: Path, *, state: bool = True) -> dict[str, bytes]:
    """{relative path: bytes} of every regular file under `root` (symlinks not followed);
    `state=False` leaves out `.ctxagent/` (backups)."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not p.is_symlink() and (state or not rel.startswith(".ctxagent/")):
            out[rel] = p.read_bytes()
    return out
