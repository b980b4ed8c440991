"""`ctxagent sessions`: the id (what `--resume ID` needs) is never cut; the task is (F13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxagent.agent.events import TurnStart
from ctxagent.agent.session import Session
from tests.support.cli import invoke

LONG_TASK = "what do you remember about the key we rotated last week, and which files still read it? " * 3


def _session(repo: Path, task: str) -> str:
    session = Session.create(repo)
    session.record_event(TurnStart(session_id=session.id, turn=1, task=task))
    session.add_message({"role": "user", "content": task}, usage={"prompt_tokens": 12345, "completion_tokens": 1})
    return session.id


@pytest.mark.parametrize("columns", [80, 60])
def test_session_id_is_never_truncated_the_task_is(tmp_path: Path, monkeypatch, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    ids = [_session(tmp_path, LONG_TASK), _session(tmp_path, "短い task 中文任务" * 8)]
    out = invoke(["sessions", "--repo", str(tmp_path)])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert all(len(line) <= columns for line in lines)
    for session_id in ids:
        [row] = [line for line in lines if session_id in line]  # whole id, on one line per session
        assert "…" in row
    assert len(lines) == 4 + len(ids)  # borders + header + one line per session: the task never wraps


def test_control_chars_in_a_recorded_task_are_visible(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    _session(tmp_path, "fix it\x1b]0;PWNED\x07 [bold]now[/]")
    out = invoke(["sessions", "--repo", str(tmp_path)])
    assert "\x1b" not in out.stdout and "fix it\\x1b]0;PWNED\\x07 [bold]now[/]" in out.stdout
    [row] = json.loads(invoke(["sessions", "--repo", str(tmp_path), "--json"]).stdout)
    assert row["task"] == "fix it\x1b]0;PWNED\x07 [bold]now[/]"  # JSON keeps the exact text, escaped
