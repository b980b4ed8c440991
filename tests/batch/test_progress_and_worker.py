"""The plain progress lines (off a terminal) and a task that stops at its setup line."""

from __future__ import annotations

import io
from pathlib import Path

from ctxagent.batch.progress import Progress
from ctxagent.batch.worker import RunOptions, run_task
from tests.batch.conftest import make_repo


def test_plain_lines_and_counts() -> None:
    stream = io.StringIO()
    with Progress(workers=2, stream=stream) as progress:
        progress({"event": "start", "total": 3, "skipped": 1, "to_run": 2})
        progress({"event": "started", "id": "a", "attempt": 1, "pid": 1})
        progress({"event": "retry", "id": "a", "attempt": 2, "reason": "the worker died (signal SIGKILL)\x1b[2J"})
        progress({"event": "done", "id": "a", "status": "finished", "steps": 2, "tokens": 10, "cost_usd": 0.5,
                  "wall_time_s": 1.0, "diff_lines": 7, "recorded": True})
        progress({"event": "done", "id": "b", "status": "interrupted", "recorded": False})
        assert progress.counts["done"] == 1 and progress.counts["tokens"] == 10 and progress.counts["retries"] == 1
        assert progress.eta() > 0  # one of two left, at this run's pace
        assert "1/2 done" in progress.render().plain and "$0.5000" in progress.render().plain
        progress({"event": "end", "done": 1, "failed": 0, "interrupted": 1, "tokens": 10, "cost_usd": 0.5,
                  "wall_time_s": 2.0})
    text = stream.getvalue()
    assert "batch: 2 to run, 1 already recorded" in text
    assert "retry a (attempt 2): the worker died (signal SIGKILL)" in text and "\x1b" not in text
    assert "a: finished · 2 steps · 7 diff lines" in text
    assert "b: interrupted (not recorded: runs again next time)" in text
    assert "1 recorded, 0 failed, 1 interrupted" in text


def test_a_failing_setup_line_ends_the_task_before_any_model_call(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"f.txt": "x\n"})
    result = run_task({"id": "s", "repo": str(repo), "task": "t", "setup": "echo preparing; exit 3"},
                      RunOptions(work_root=str(tmp_path / "work")), env={})
    assert result["status"] == "setup_failed" and result["reason"] == "setup exited 3"
    assert "preparing" in result["setup"]["output"] and result["diff"] == "" and result["steps"] == 0
    assert not (tmp_path / "work" / "s").exists()
