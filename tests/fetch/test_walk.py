"""Which files are candidates, and the glob filter (ripgrep's `--glob` reading)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.fetch.walk import glob_match, list_files, read_text


@pytest.mark.parametrize("rel,glob,expected", [
    ("top.py", "*.py", True),
    ("src/a/x.py", "*.py", True),
    ("src/a/x.py", "src/*.py", False),
    ("src/y.py", "src/*.py", True),
    ("src/a/x.py", "src/**/*.py", True),
    ("src/y.py", "src/**/*.py", True),
    ("src/a/q.md", "src/**", True),
    ("docs/z.md", "src/**", False),
    ("src/a/x.py", "**/a/*", True),
    ("src/a/x.py", "!src/**", False),
    ("top.py", "!src/**", True),
    ("top.py", "/top.py", True),
    ("docs/z.md", "*.[pm][yd]", True),
    ("docs/z.txt", "*.[!t]xt", False),
    ("src/a/x.py", "a/*.py", False),
    ("file?.txt", "file[?].txt", True),
    ("a+b.py", "a+b.py", True),
])
def test_glob_match(rel: str, glob: str, expected: bool) -> None:
    assert glob_match(rel, glob) is expected


def test_list_files_skips_hidden_excluded_symlinks_and_big(tmp_path: Path) -> None:
    for rel in ("a.py", "sub/b.md", ".git/config", ".ctxagent/notes/n.md", "node_modules/x.js", "venv/lib.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n", encoding="utf-8")
    (tmp_path / "huge.txt").write_bytes(b"x" * 1_000_001)
    (tmp_path / "link.py").symlink_to(tmp_path / "a.py")
    assert [e.rel for e in list_files(tmp_path)] == ["a.py", "sub/b.md"]
    assert [e.rel for e in list_files(tmp_path, "*.md")] == ["sub/b.md"]


def test_signature_changes_when_a_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("one\n", encoding="utf-8")
    before = list_files(tmp_path)[0].sig
    tmp = tmp_path / "a.tmp"
    tmp.write_text("two\n", encoding="utf-8")
    tmp.replace(path)  # atomic replace, as the patch tool writes: same size, new inode
    assert list_files(tmp_path)[0].sig != before


def test_read_text_refuses_binary_and_replaces_bad_bytes(tmp_path: Path) -> None:
    (tmp_path / "b").write_bytes(b"abc\0def")
    (tmp_path / "t").write_bytes(b"caf\xe9\n")
    assert read_text(tmp_path / "b") is None
    assert read_text(tmp_path / "t") == "caf\ufffd\n"
    assert read_text(tmp_path / "missing") is None
