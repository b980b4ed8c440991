"""A corrupt todos.json is handled once and said clearly (breaker F12), through `ctxagent todo`.

Before: every command copied the corrupt file to a new `todos.json.corrupt-<ms>` and left
it in place, and the board silently showed empty. Now: a board the `.bak` restores is
written back (one copy aside, later commands are clean); without a usable backup each
command says so in one warning, the corrupt file is copied aside once, and the next
change replaces it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import Out, invoke


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    root = tmp_path / "repo"
    root.mkdir()
    return root


def todo(repo: Path, *args: str) -> Out:
    return invoke(["todo", *args, "--repo", str(repo)])


def board(repo: Path) -> Path:
    return repo / ".ctxagent" / "todos.json"


def asides(repo: Path) -> list[Path]:
    return sorted((repo / ".ctxagent").glob("todos.json.corrupt-*"))


def test_F12_a_board_restored_from_the_backup_is_written_back_once(repo: Path) -> None:
    for item in ("first", "second"):
        assert todo(repo, "add", item).exit_code == 0  # .bak holds the board with "first"
    board(repo).write_bytes(b'{"items": [')
    out = todo(repo, "list")
    assert out.exit_code == 0 and "first" in out.stdout
    assert out.stderr.count("warning") == 1 and "restored from todos.json.bak" in out.stderr
    assert [i["content"] for i in json.loads(board(repo).read_text())["items"]] == ["first"]
    for _ in range(2):
        again = todo(repo, "list")
        assert again.exit_code == 0 and "warning" not in again.stderr and "first" in again.stdout
    assert len(asides(repo)) == 1 and asides(repo)[0].read_bytes() == b'{"items": ['


def test_F12_without_a_backup_every_command_says_so_and_one_copy_is_kept(repo: Path) -> None:
    board(repo).parent.mkdir(parents=True)
    board(repo).write_bytes(b"\x00garbage")
    for _ in range(3):
        out = todo(repo, "list")
        assert out.exit_code == 0
        assert out.stderr.count("warning") == 1 and "no usable backup" in out.stderr
    assert len(asides(repo)) == 1 and board(repo).read_bytes() == b"\x00garbage"
    assert todo(repo, "add", "fresh").exit_code == 0  # the next change replaces the corrupt file
    assert [i["content"] for i in json.loads(board(repo).read_text())["items"]] == ["fresh"]
    out = todo(repo, "list")
    assert "warning" not in out.stderr and "fresh" in out.stdout and len(asides(repo)) == 1


def test_F12_the_notes_index_follows_the_same_rule(repo: Path) -> None:
    assert invoke(["notes", "add", "--title", "kept", "--content", "body", "--repo", str(repo)]).exit_code == 0
    index = repo / ".ctxagent" / "notes" / "notes_index.json"
    index.write_bytes(b"{")
    (index.parent / "notes_index.json.bak").unlink(missing_ok=True)
    for _ in range(3):
        out = invoke(["notes", "list", "--repo", str(repo)])
        assert out.exit_code == 0 and "kept" in out.stdout
    assert len(list(index.parent.glob("notes_index.json.corrupt-*"))) == 1
    assert json.loads(index.read_text())["notes"]
