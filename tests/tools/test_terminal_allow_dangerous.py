"""HelloCodeAgentCli's guide calls terminal[{"command": ..., "allow_dangerous": false}]: false is
the read-only terminal; true is refused here, saying what it needs."""

from __future__ import annotations

from pathlib import Path

from ctxagent.tools.terminal import TerminalTool


def test_allow_dangerous_false_runs_read_only(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    result = TerminalTool(workspace=tmp_path, sandbox=False).execute({"command": "cat a.txt", "allow_dangerous": False})
    assert result.ok and "hello" in result.content


def test_allow_dangerous_true_says_what_it_needs(tmp_path: Path) -> None:
    result = TerminalTool(workspace=tmp_path, sandbox=False).execute({"command": "touch b", "allow_dangerous": True})
    assert not result.ok and "--mode workspace-write" in result.content
    assert not (tmp_path / "b").exists()
