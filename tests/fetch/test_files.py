"""Literal search: the query is data (never a shell word or an rg option), and ripgrep
and the pure-Python scan find the same files and lines."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ctxagent.fetch.files import find_rg, literal_pattern, rg_argv, search_literal

RG = find_rg()
needs_rg = pytest.mark.skipif(RG is None, reason="ripgrep (rg) is not installed")
ENGINES = [pytest.param(RG, id="rg", marks=needs_rg), pytest.param(None, id="python")]

HOSTILE = [
    "--pre=./evil.sh",
    "-e foo",
    "-x",
    "--files",
    "$(touch pwned)",
    "`touch pwned`",
    "a.*b(c[",
    "foo; touch pwned",
    "' OR 1=1 --",
    "\\d+\\s",
]


def _evil_workspace(root: Path) -> Path:
    """A workspace where any execution leaves a `pwned` file behind."""
    script = root / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {root / 'pwned'}\ncat \"$1\"\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (root / "foo.txt").write_text("foo alone\n", encoding="utf-8")
    for i, query in enumerate(HOSTILE):
        (root / f"literal{i}.txt").write_text(f"before\nthe text {query} is here\nafter\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("index,query", list(enumerate(HOSTILE)))
def test_query_is_searched_literally_and_nothing_runs(tmp_path: Path, engine: str | None, index: int,
                                                    query: str) -> None:
    root = _evil_workspace(tmp_path)
    found = search_literal(root, query, rg=engine)
    assert not (root / "pwned").exists()
    assert found.lines == {f"literal{index}.txt": [(2, f"the text {query} is here")]}


@needs_rg
def test_user_ripgrep_config_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _evil_workspace(tmp_path)
    config = tmp_path / "rgrc"
    config.write_text(f"--pre={root / 'evil.sh'}\n", encoding="utf-8")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(config))
    found = search_literal(root, "before", rg=RG)
    assert found.engine == "rg" and len(found.lines) == len(HOSTILE)
    assert not (root / "pwned").exists()


def test_rg_argv_puts_query_after_double_dash_and_glob_in_one_word() -> None:
    argv = rg_argv("/usr/bin/rg", "--pre=sh", "--pre=sh")
    assert argv[-3:] == ["--", "--pre=sh", "."]
    assert "--glob=--pre=sh" in argv and "--pre=sh" not in argv[:-3]
    assert "--no-config" in argv and "--fixed-strings" in argv


def _mixed_workspace(root: Path) -> Path:
    files = {
        "src/app.py": "def Refresh():\n    return 'refresh ME'\n",
        "src/deep/more.py": "# refresh here too\nx = 1\n",
        "docs/readme.md": "How to REFRESH the cache.\n",
        "zh/说明.md": "刷新缓存的方法：调用 refresh()\n",
        ".hidden/secret.py": "refresh\n",
        ".env": "refresh=1\n",
        "node_modules/pkg/index.js": "refresh()\n",
        "__pycache__/app.cpython-311.pyc": "refresh\n",
        "notes.txt": "line one\r\nrefresh with crlf\r\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
    (root / "blob.bin").write_bytes(b"refresh\0\x01\x02")
    (root / "big.txt").write_text("refresh\n" + "x" * 1_100_000, encoding="utf-8")
    os.symlink(root / "src" / "app.py", root / "link.py")
    return root


@needs_rg
@pytest.mark.parametrize("query", ["refresh", "REFRESH", "刷新缓存", "refresh()", "no such text"])
@pytest.mark.parametrize("glob", [None, "*.py", "src/**", "!src/**", "*.md", "zh/*"])
def test_rg_and_python_find_the_same_lines(tmp_path: Path, query: str, glob: str | None) -> None:
    root = _mixed_workspace(tmp_path)
    by_rg = search_literal(root, query, glob=glob, rg=RG)
    by_python = search_literal(root, query, glob=glob, rg=None)
    assert (by_rg.engine, by_python.engine) == ("rg", "python")
    assert by_rg.lines == by_python.lines


def test_skipped_files_are_never_searched(tmp_path: Path) -> None:
    found = search_literal(_mixed_workspace(tmp_path), "refresh", rg=None)
    assert sorted(found.lines) == ["docs/readme.md", "notes.txt", "src/app.py", "src/deep/more.py", "zh/说明.md"]
    assert found.lines["notes.txt"] == [(2, "refresh with crlf")]


def test_missing_rg_binary_falls_back_to_python(tmp_path: Path) -> None:
    found = search_literal(_mixed_workspace(tmp_path), "refresh", rg=str(tmp_path / "no-such-rg"))
    assert found.engine == "python" and "src/app.py" in found.lines


def test_multiline_query_searches_its_longest_line() -> None:
    assert literal_pattern("Traceback:\n  File 'x.py', line 3\n\n") == "File 'x.py', line 3"
    assert literal_pattern("   \n") == ""
