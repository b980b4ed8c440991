"""`ctxagent batch --backend local`: six tasks over three real repositories, a worker killed
mid-task, a rerun that does nothing, `--retry-failed`, Ctrl-C; the real CLI, a fake model."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.batch.conftest import API_KEY, KILLED, Batch, applied, finish, held_worker, model_env, start_batch, wait_for_request
from tests.support.fake_openai import FakeOpenAI

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the worker's pid in /proc")


def results(batch: Batch) -> dict[str, dict]:
    lines = [json.loads(line) for line in (batch.out / "results.jsonl").read_text().splitlines()]
    return {r["id"]: r for r in lines}


def check_outputs(batch: Batch, tmp: Path, *, work: bool = True) -> dict[str, dict]:
    """Every task finished with the right diff; results and preds valid; sessions kept; no key;
    (`work`) every working copy under DIR/.work removed."""
    recorded = results(batch)
    assert sorted(recorded) == ["t1", "t2", "t3", "t4", "t5", "t6"]
    repos = {"t1": 0, "t2": 0, "t3": 1, "t4": 1, "t5": 2, "t6": 2}
    for task_id, line in recorded.items():
        assert line["status"] == "finished", line
        assert line["steps"] == 2 and line["tokens"] > 0 and line["model"] == "fake-model"
        repo = batch.repos[repos[task_id]]
        base = batch.alpha_first if task_id == "t1" else "HEAD"
        copy = applied(repo, base, line["diff"], tmp / f"check-{task_id}")
        for name, body in batch.expected[task_id].items():
            assert (copy / name).read_text() == body
        session = Path(line["session_path"])
        assert session.parent == batch.out / "sessions" and "apply_patch" in session.read_text()
    assert recorded["t2"]["test"]["passed"] is True and recorded["t5"]["test"]["passed"] is False
    assert recorded["t1"]["test"] is None
    preds = [json.loads(line) for line in (batch.out / "preds.jsonl").read_text().splitlines()]
    assert sorted(p["instance_id"] for p in preds) == sorted(recorded)
    for pred in preds:
        assert set(pred) == {"instance_id", "model_name_or_path", "model_patch"}
        assert pred["model_patch"] == recorded[pred["instance_id"]]["diff"]
        assert pred["model_name_or_path"] == "ctxagent__fake-model"
    for path in batch.out.rglob("*"):
        if path.is_file():
            assert API_KEY not in path.read_text(errors="replace"), path
    if work:
        assert not list((batch.out / ".work").iterdir())  # every working copy removed
    return recorded


@linux_only
def test_six_tasks_a_killed_worker_and_a_rerun(batch: Batch, cli_env: dict, tmp_path: Path) -> None:
    before = batch.state()
    with FakeOpenAI(rules=batch.rules()) as server:
        env = {**cli_env, **model_env(server)}
        proc = start_batch(batch, env, "--workers", "2")
        pid = held_worker(server, f"TASK {KILLED}:")
        assert pid != proc.pid
        os.kill(pid, signal.SIGKILL)
        code, events, err = finish(proc)
        assert code == 0, err
        recorded = check_outputs(batch, tmp_path)
        assert recorded[KILLED]["attempts"] == 2
        assert all(recorded[i]["attempts"] == 1 for i in recorded if i != KILLED)
        [retry] = [e for e in events if e["event"] == "retry"]
        assert retry["id"] == KILLED and "SIGKILL" in retry["reason"]
        assert events[-1]["event"] == "end" and events[-1]["done"] == 6
        assert batch.state() == before

        served = len(server.requests)
        lines = (batch.out / "results.jsonl").read_bytes()
        code, events, err = finish(start_batch(batch, env, "--workers", "2"))
        assert code == 0, err
        assert len(server.requests) == served  # the rerun called no model
        assert (batch.out / "results.jsonl").read_bytes() == lines
        assert events[0] == {"event": "start", "total": 6, "skipped": 6, "to_run": 0, "done": 0, "failed": 0,
                             "interrupted": 0, "tokens": 0, "cost_usd": 0.0}
    assert batch.state() == before


def test_retry_failed_runs_only_the_failures(batch: Batch, cli_env: dict) -> None:
    batch.file.write_text("".join(json.dumps(t) + "\n" for t in batch.tasks[:2]), encoding="utf-8")
    rules = batch.rules(hold=None)
    rules[0]["steps"] = [{"type": "error", "status": 400}]  # t1 fails once (a 400 is not retried)
    with FakeOpenAI(rules=rules) as server:
        env = {**cli_env, **model_env(server)}
        code, _, err = finish(start_batch(batch, env, "--workers", "1"))
        assert code == 1, err  # a task failed
        assert results(batch)["t1"]["status"] == "error" and results(batch)["t2"]["status"] == "finished"
        server.rules[:] = batch.rules(hold=None)[:2]  # (a plain rerun skipping it: test_results.py)
        code, events, err = finish(start_batch(batch, env, "--workers", "1", "--retry-failed"))
        assert code == 0, err
    assert events[0]["to_run"] == 1
    lines = (batch.out / "results.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["t2", "t1", "t1"] or \
        [json.loads(line)["id"] for line in lines] == ["t1", "t2", "t1"]
    assert results(batch)["t1"]["status"] == "finished"
    preds = [json.loads(line) for line in (batch.out / "preds.jsonl").read_text().splitlines()]
    assert sorted(p["instance_id"] for p in preds) == ["t1", "t2"]  # the retried id's line replaced
    assert [p for p in preds if p["instance_id"] == "t1"][0]["model_patch"] == results(batch)["t1"]["diff"] != ""


@linux_only
def test_ctrl_c_keeps_what_finished_and_the_rerun_finishes(batch: Batch, cli_env: dict, tmp_path: Path) -> None:
    before = batch.state()
    with FakeOpenAI(rules=batch.rules()) as server:
        env = {**cli_env, **model_env(server)}
        proc = start_batch(batch, env, "--workers", "1")  # one at a time: t1, t2 finish before t3 is held
        wait_for_request(server, f"TASK {KILLED}:")
        proc.send_signal(signal.SIGINT)
        code, events, err = finish(proc)
        assert code == 130, err
        assert sorted(results(batch)) == ["t1", "t2"]
        stopped = [e for e in events if e["event"] == "done" and e["id"] == KILLED]
        assert stopped and stopped[0]["recorded"] is False and stopped[0]["status"] == "interrupted"
        assert not any(e["event"] == "started" and e["id"] in ("t4", "t5", "t6") for e in events)
        code, events, err = finish(start_batch(batch, env, "--workers", "2"))
        assert code == 0, err
        assert events[0]["to_run"] == 4
    check_outputs(batch, tmp_path)
    assert batch.state() == before


@linux_only
def test_sigkill_of_the_driver_loses_only_the_task_in_flight(batch: Batch, cli_env: dict) -> None:
    batch.file.write_text("".join(json.dumps(t) + "\n" for t in batch.tasks[:3]), encoding="utf-8")
    with FakeOpenAI(rules=batch.rules()) as server:
        env = {**cli_env, **model_env(server)}
        proc = start_batch(batch, env, "--workers", "1")
        worker = held_worker(server, f"TASK {KILLED}:")
        proc.kill()
        proc.communicate(timeout=60)
        wait_gone(worker)  # the worker follows its driver (PR_SET_PDEATHSIG), nothing left running
        assert sorted(results(batch)) == ["t1", "t2"]
        code, events, err = finish(start_batch(batch, env, "--workers", "1"))
        assert code == 0, err
    assert events[0]["to_run"] == 1 and results(batch)[KILLED]["status"] == "finished"
    assert not list((batch.out / ".work").iterdir())


def wait_gone(pid: int, deadline_s: float = 60) -> None:
    """Until process `pid` has exited (waits for the event; asserts nothing about time)."""
    import time

    end = time.monotonic() + deadline_s
    while Path(f"/proc/{pid}").exists() and "Z" not in _state(pid):
        assert time.monotonic() < end, f"worker {pid} outlived its driver"
        time.sleep(0.05)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"
