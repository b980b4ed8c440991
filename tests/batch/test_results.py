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


def test_a_prediction_a_kill_left_behind_is_written_back(tmp_path: Path) -> None:
    out = ResultsDir(tmp_path)
    out.record(result("a"), model_name="ctxagent__m")
    b = {k: v for k, v in result("b", diff="diff b\n").items() if k != "transcript"}
    with (tmp_path / "results.jsonl").open("a") as handle:  # SIGKILL after the results line, before preds
        handle.write(json.dumps({**b, "model_name_or_path": "ctxagent__m"}) + "\n")
    with (tmp_path / "preds.jsonl").open("a") as handle:
        handle.write('{"instance_id": "c", "model_pa')  # and a torn prediction
    ResultsDir(tmp_path).reconcile()
    preds = [json.loads(x) for x in (tmp_path / "preds.jsonl").read_text().splitlines()]
    assert preds == [{"instance_id": "a", "model_name_or_path": "ctxagent__m", "model_patch": "diff --git a/x b/x\n"},
                     {"instance_id": "b", "model_name_or_path": "ctxagent__m", "model_patch": "diff b\n"}]
    before = (tmp_path / "preds.jsonl").stat().st_mtime_ns
    ResultsDir(tmp_path).reconcile()
    assert (tmp_path / "preds.jsonl").stat().st_mtime_ns == before  # nothing to repair: not rewritten


def test_another_batchs_folder_is_refused(tmp_path: Path) -> None:
    out = ResultsDir(tmp_path / "out")
    out.record({**result("t1"), "task_digest": "0123456789abcdef"}, model_name="m")
    out.check_same({"t1": "0123456789abcdef", "t2": "fedcba9876543210"})  # the same task, and a new one
    with pytest.raises(BatchError, match="records another task under id 't1'.*another batch's folder"):
        out.check_same({"t1": "fedcba9876543210"})
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("the user's\n")
    with pytest.raises(BatchError, match="already holds other files .notes.txt.*give a new or empty folder"):
        ResultsDir(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "the user's\n"
    (tmp_path / "left").mkdir()
    (tmp_path / "left" / "sessions").mkdir()  # a batch's folder whose results the user deleted
    ResultsDir(tmp_path / "left")
