"""Bad command-line input is a usage error (exit 2) that says what to do, never a crash
(exit 70) and never a write (new-user trial findings 1, 3 and 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import invoke


@pytest.mark.parametrize("query", ["", "   ", "\n"])
def test_an_empty_context_query_is_a_usage_error(tmp_path: Path, query: str) -> None:
    result = invoke(["context", query, "--repo", str(tmp_path)], None)
    assert result.exit_code == 2 and "query is empty" in result.output
    assert not (tmp_path / ".ctxagent").exists()


@pytest.mark.parametrize("task", ["", "  \t "])
def test_an_empty_run_task_is_a_usage_error_before_any_model_is_asked(tmp_path: Path, task: str) -> None:
    result = invoke(["run", task, "--repo", str(tmp_path)], None)
    assert result.exit_code == 2 and "task is empty" in result.output


@pytest.mark.parametrize("command", [["notes", "list"], ["todo", "list"], ["memory", "list"],
                                     ["notes", "add", "--title", "t"], ["todo", "add", "x"], ["memory", "add", "x"]])
def test_a_mistyped_repo_is_refused_and_nothing_is_created(tmp_path: Path, command: list[str]) -> None:
    missing = tmp_path / "no" / "such" / "repo"
    result = invoke([*command, "--repo", str(missing)], None)
    assert result.exit_code == 2 and "does not exist" in result.output
    assert not (tmp_path / "no").exists()


def test_a_broken_configuration_is_reported_by_context_not_ignored(tmp_path: Path) -> None:
    (tmp_path / ".ctxagent").mkdir()
    (tmp_path / ".ctxagent" / "config.toml").write_text("[model]\ncontext_window = 10\n", encoding="utf-8")
    result = invoke(["context", "hi", "--repo", str(tmp_path)], None)
    assert result.exit_code == 2 and "context_window" in result.output and "crashed" not in result.output
