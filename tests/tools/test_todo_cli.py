"""`ctxagent todo ...`: the same actions as the todo tool, a coloured board for people."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import Out  # noqa: F401
from tests.support.cli import invoke as _invoke


def _ctx(repo: Path, *args: str) -> Out:
    return _invoke(["todo", *args, "--repo", str(repo)])


def _board(repo: Path) -> list[dict]:
    return json.loads(_ctx(repo, "list", "--json").stdout)


def test_add_start_done_rm_clear(tmp_path: Path) -> None:
    assert "todo board is empty" in _ctx(tmp_path, "list").stdout
    added = _ctx(tmp_path, "add", "write the tests", "--priority", "high", "--json")
    assert json.loads(added.stdout)["id"] == 1
    _ctx(tmp_path, "add", "implement")
    _ctx(tmp_path, "add", "document")
    assert _ctx(tmp_path, "start", "1").exit_code == 0
    shown = _ctx(tmp_path, "list")
    assert "write the tests" in shown.stdout and "1/3" not in shown.stdout and "0/3" in shown.stdout
    assert _ctx(tmp_path, "done", "1").exit_code == 0
    assert _ctx(tmp_path, "start", "2").exit_code == 0
    assert _ctx(tmp_path, "pause", "2").exit_code == 0
    assert _ctx(tmp_path, "rm", "3").exit_code == 0
    assert [(i["id"], i["status"]) for i in _board(tmp_path)] == [(1, "completed"), (2, "pending")]
    cleared = json.loads(_ctx(tmp_path, "clear", "--json").stdout)
    assert [i["id"] for i in cleared] == [1]
    assert [i["id"] for i in _board(tmp_path)] == [2]
    assert (tmp_path / ".ctxagent" / "todos.json.bak").exists()


def test_S05_second_start_is_refused_and_board_unchanged(tmp_path: Path) -> None:
    _ctx(tmp_path, "add", "a")
    _ctx(tmp_path, "add", "b")
    _ctx(tmp_path, "start", "1")
    result = _ctx(tmp_path, "start", "2")
    assert result.exit_code == 1 and "items 1 and 2" in result.output
    assert [i["status"] for i in _board(tmp_path)] == ["in_progress", "pending"]


def test_status_filter_and_errors(tmp_path: Path) -> None:
    _ctx(tmp_path, "add", "a")
    assert _board(tmp_path)[0]["status"] == "pending"
    assert json.loads(_ctx(tmp_path, "list", "--status", "completed", "--json").stdout) == []
    missing = _ctx(tmp_path, "done", "42")
    assert missing.exit_code == 1 and "no todo item 42" in missing.output
    assert _ctx(tmp_path, "done", "x").exit_code == 2


def test_S01a_empty_board_file_warns_and_continues(tmp_path: Path) -> None:
    (tmp_path / ".ctxagent").mkdir()
    (tmp_path / ".ctxagent" / "todos.json").write_bytes(b"")
    result = _ctx(tmp_path, "list")
    assert result.exit_code == 0 and "todo board is empty" in result.stdout
    assert "warning:" in result.stderr and "unreadable" in result.stderr
