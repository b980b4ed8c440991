"""Helpers shared by the terminal tool tests: a small workspace and tree snapshots."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

MARKERS = ("/tmp/copy", "/tmp/pwned", "/tmp/ctxagent-marker")
"""Files outside the workspace that a refused command might try to create."""


def make_workspace(root: Path) -> Path:
    """README.md, a.txt, src/main.py under `root/ws`; returns the workspace path."""
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "README.md").write_text("# Demo\nhello foo\nTODO: write docs\n$(id) and $IFS stay literal\n")
    (ws / "a.txt").write_text("b 2\na 1\nb 2\nx&&y\na;b here\n")
    (ws / "src" / "main.py").write_text("def main():\n    # TODO: more\n    print('hi')\n")
    return ws


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under `root` with its kind, size, mtime and content hash."""
    state: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else ""
            state[str(path.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return state


def marker_state() -> dict[str, tuple | None]:
    """Whether each of MARKERS exists (and its mtime), to compare before and after."""
    out: dict[str, tuple | None] = {}
    for name in MARKERS:
        try:
            st = os.lstat(name)
            out[name] = (st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            out[name] = None
    return out
