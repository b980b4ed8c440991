"""Issue 17 S9 for context_fetch's search: ripgrep runs with `--no-ignore`, so it opens
no ignore file at all (`.gitignore`, `.ignore`, `.rgignore`, `.git/info/exclude`, nor
any in a parent directory): a link to an outside file, a FIFO or /dev/zero there
neither shows up nor blocks the search."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ctxagent.fetch.files import find_rg, rg_argv, search_literal

RG = find_rg()
LEAK = "S9-FETCH-LEAK"


@pytest.mark.skipif(RG is None, reason="rg is not installed")
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("kind", ["outside link", "fifo", "link to /dev/zero"])
@pytest.mark.parametrize("name", [".gitignore", ".ignore", ".rgignore", "sub/.gitignore", ".git/info/exclude"])
def test_s9_context_fetch_search_reads_no_ignore_file(tmp_path: Path, name: str, kind: str) -> None:
    (tmp_path / "secret.txt").write_text(f"{LEAK}{{\nrefresh_token\n")
    (tmp_path / ".ignore").write_text(f"{LEAK}{{\n")  # above the workspace
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "code.py").write_text("def refresh_token():\n    pass\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    if kind == "outside link":
        path.symlink_to(tmp_path / "secret.txt")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    started = time.monotonic()
    found = search_literal(root, "refresh_token", rg=RG)
    assert time.monotonic() - started < 5
    assert found.engine == "rg" and list(found.lines) == ["sub/code.py"]
    assert LEAK not in repr(found.lines)


def test_s9_the_rg_command_line_switches_every_ignore_file_off() -> None:
    argv = rg_argv("rg", "x", None)
    assert "--no-ignore" in argv and "--no-config" in argv


def test_s14_context_fetch_reads_no_link_or_special_file_swapped_in(tmp_path: Path) -> None:
    """A listed file replaced by a link (or a FIFO) before it is read is not read."""
    from ctxagent.fetch.walk import read_text

    (tmp_path / "secret.txt").write_text(LEAK)
    (tmp_path / "plain.py").write_text("x = 1\n")
    (tmp_path / "swapped.py").symlink_to(tmp_path / "secret.txt")
    os.mkfifo(tmp_path / "pipe.py")
    assert read_text(tmp_path / "plain.py") == "x = 1\n"
    assert read_text(tmp_path / "swapped.py") is None
    assert read_text(tmp_path / "pipe.py") is None
