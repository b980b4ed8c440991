"""`ctxagent batch --backend ray` on a real local Ray cluster (127.0.0.1, 2 CPUs, one per module):
six tasks over three repositories, a Ray worker killed mid-task and retried, a rerun that does nothing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from tests.batch.conftest import KILLED, Batch, finish, held_worker, model_env, start_batch
from tests.batch.test_local_batch import check_outputs
from tests.e2e.conftest import ROOT
from tests.support.fake_openai import FakeOpenAI

pytest.importorskip("ray", reason="the ray backend's tests need Ray: pip install 'ctxagent[ray]'")
pytestmark = [pytest.mark.xdist_group("ray-cluster"),
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the worker's pid in /proc")]
RAY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[tuple[str, Path]]:
    """(address, the cluster's TMPDIR): one local cluster for the module, stopped at its end."""
    root = Path(tempfile.mkdtemp(prefix="rb", dir="/tmp"))  # short: Ray's socket paths must fit in 107 bytes
    (root / "tmp").mkdir()
    env = {**os.environ, **RAY_ENV, "PYTHONPATH": str(ROOT), "TMPDIR": str(root / "tmp"), "HOME": str(root),
           "CTXAGENT_LOCAL_MODEL": "/nonexistent/model.gguf"}
    env = {k: v for k, v in env.items() if not k.startswith(("CTXAGENT_BASE", "CTXAGENT_MODEL", "CTXAGENT_API"))}
    head = subprocess.Popen([sys.executable, str(Path(__file__).with_name("ray_head.py")), str(root / "ray")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=(root / "head.log").open("wb"),
                            env=env, text=True, start_new_session=True)
    address = head.stdout.readline().strip()  # type: ignore[union-attr]
    try:
        assert address.startswith("127.0.0.1:"), (root / "head.log").read_text()
        yield address, root / "tmp"
    finally:
        head.stdin.close()  # type: ignore[union-attr]
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
        head.stdout.close()  # type: ignore[union-attr]
        shutil.rmtree(root, ignore_errors=True)


def test_six_tasks_on_ray_a_killed_worker_and_a_rerun(ray_cluster: tuple[str, Path], batch: Batch, cli_env: dict,
                                                      tmp_path: Path) -> None:
    address, cluster_tmp = ray_cluster
    before = batch.state()
    with FakeOpenAI(rules=batch.rules()) as server:
        env = {**cli_env, **RAY_ENV, **model_env(server)}
        args = ("--backend", "ray", "--ray-address", address, "--workers", "2")
        proc = start_batch(batch, env, *args)
        pid = held_worker(server, f"TASK {KILLED}:")
        assert pid != proc.pid
        os.kill(pid, signal.SIGKILL)
        code, events, err = finish(proc)
        assert code == 0, err
        recorded = check_outputs(batch, tmp_path, work=False)
        assert recorded[KILLED]["attempts"] == 2
        assert all(recorded[i]["attempts"] == 1 for i in recorded if i != KILLED)
        [retry] = [e for e in events if e["event"] == "retry"]
        assert retry["id"] == KILLED and "WorkerCrashedError" in retry["reason"]
        left = [p.name for p in cluster_tmp.glob("ctxagent-*")]
        assert all(name.startswith(f"ctxagent-{KILLED}-") for name in left), left  # only the killed copy stays

        served = len(server.requests)
        lines = (batch.out / "results.jsonl").read_bytes()
        code, events, err = finish(start_batch(batch, env, *args))
        assert code == 0, err
        assert len(server.requests) == served and (batch.out / "results.jsonl").read_bytes() == lines
        assert events[0]["to_run"] == 0 and events[-1]["event"] == "end"
    assert batch.state() == before
    assert json.loads((batch.out / "preds.jsonl").read_text().splitlines()[0])["model_name_or_path"]


def test_a_task_no_node_can_hold_is_refused_not_waited_for(ray_cluster: tuple[str, Path], batch: Batch,
                                                           cli_env: dict) -> None:
    address, _ = ray_cluster
    with FakeOpenAI(rules=batch.rules(hold=None)) as server:
        env = {**cli_env, **RAY_ENV, **model_env(server)}
        code, events, err = finish(start_batch(batch, env, "--backend", "ray", "--ray-address", address,
                                               "--num-cpus", "3"))  # the cluster's one node has 2
        assert not server.requests
    assert code == 1 and "--num-cpus 3 but the largest node of the Ray cluster has 2 CPUs" in err, err
    assert not (batch.out / "results.jsonl").exists() or not (batch.out / "results.jsonl").read_text()
