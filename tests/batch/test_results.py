"""The output folder: results lines, SWE-bench predictions, resume and --retry-failed, one driver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxagent.batch.results import ResultsDir
from ctxagent.errors import BatchError


def result(task_id: str, status: str = "finished", diff: str = "diff --git a/x b/x\n") -> dict:
    return {"id": task_id, "status": status, "diff": diff, "transcript": '{"kind": "meta"}\n', "tokens": 3}


def test_record_writes_results_preds_and_the_session(tmp_path: Path) -> None:
    out = ResultsDir(tmp_path / "out")
    line = out.record(result("a"), model_name="ctxagent__m")
    assert "transcript" not in line and Path(line["session_path"]).read_text() == '{"kind": "meta"}\n'
    assert json.loads((tmp_path / "out" / "results.jsonl").read_text()) == line
    assert json.loads((tmp_path / "out" / "preds.jsonl").read_text()) == {
        "instance_id": "a", "model_name_or_path": "ctxagent__m", "model_patch": "diff --git a/x b/x\n"}


def test_resume_and_retry_failed(tmp_path: Path) -> None:
    out = ResultsDir(tmp_path)
    out.record(result("a"), model_name="m")
    out.record(result("b", "error", ""), model_name="m")
    assert out.to_run(["a", "b", "c"], retry_failed=False) == ["c"]
    assert out.to_run(["a", "b", "c"], retry_failed=True) == ["b", "c"]
    out.record(result("b", "finished", "diff b\n"), model_name="m")
    assert out.to_run(["a", "b"], retry_failed=True) == []
    preds = [json.loads(x) for x in (tmp_path / "preds.jsonl").read_text().splitlines()]
    assert [(p["instance_id"], p["model_patch"]) for p in preds] == [("a", "diff --git a/x b/x\n"), ("b", "diff b\n")]


def test_a_torn_last_line_is_not_a_result(tmp_path: Path) -> None:
    out = ResultsDir(tmp_path)
    out.record(result("a"), model_name="m")
    with (tmp_path / "results.jsonl").open("a") as handle:
        handle.write('{"id": "b", "status": "fini')  # SIGKILL mid-write
    assert sorted(ResultsDir(tmp_path).recorded()) == ["a"]
    ResultsDir(tmp_path).record(result("b"), model_name="m")
    assert sorted(ResultsDir(tmp_path).recorded()) == ["a", "b"]


def test_one_driver_per_folder(tmp_path: Path) -> None:
    with ResultsDir(tmp_path).lock():
        with pytest.raises(BatchError, match="another `ctxagent batch` is writing"):
            ResultsDir(tmp_path).lock()
