"""Batch throughput (issue 14): tasks per minute and driver overhead per task, local and Ray.

`python benchmarks/batch_throughput.py [--tasks 8] [--latency 0.5] [--backends local,ray]`
runs the real `ctxagent batch` (subprocess, --json) over TASKS small git repositories
(one apply_patch and one answer each, from the fake server of tests/support) at 1, 2 and
4 workers. Two passes: an instant model (every second is ours: overhead per task =
worker-seconds / tasks) and a model that delays each reply (LATENCY/2 s before its first
and its last chunks; speed-up over 1 worker). Ray runs on one local cluster of 4 CPUs on 127.0.0.1 started here. Figures:
docs/benchmarks.md, "Batch runs (issue 14)".
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.fake_openai import FakeOpenAI, text, tool_calls  # noqa: E402

RAY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
HEAD = ("import sys, ray\nc = ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, "
        "_temp_dir=sys.argv[1])\nprint(c.address_info['gcs_address'], flush=True)\nsys.stdin.read()\nray.shutdown()\n")


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def make_tasks(root: Path, count: int) -> tuple[Path, list[dict[str, Any]]]:
    """`count` tasks, one repository each; the rules that make each task's edit."""
    lines, rules = [], []
    for i in range(count):
        repo = root / f"repo{i}"
        repo.mkdir()
        (repo / "f.txt").write_text("old\n")
        git(repo, "init", "-q")
        git(repo, "add", ".")
        git(repo, "commit", "-qm", "base")
        lines.append(json.dumps({"id": f"b{i}", "repo": str(repo), "task": f"TASK b{i}: change f.txt"}))
        patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n-old\n+new\n*** End Patch\n"
        rules.append({"contains": f"TASK b{i}:", "steps": [tool_calls([("apply_patch", json.dumps({"patch": patch}))]),
                                                           text("done")]})
    path = root / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path, rules


def with_latency(rules: list[dict[str, Any]], seconds: float) -> list[dict[str, Any]]:
    """Each reply slowed: `seconds / 2` before each streamed chunk (two or three per reply)."""
    return [{**r, "steps": [{**s, "delay": seconds / 2, "chunk_size": 100_000} for s in r["steps"]]} for r in rules]


def run_once(root: Path, n: int, backend: str, workers: int, latency: float, address: str | None) -> dict[str, Any]:
    run = root / f"{backend}-{workers}-{latency}-{n}"
    run.mkdir()
    tasks, rules = make_tasks(run, n)
    home = run / "home"
    home.mkdir()
    with FakeOpenAI(rules=with_latency(rules, latency) if latency else rules) as server:
        env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "HOME": str(home),
               "XDG_CONFIG_HOME": str(home / ".config"), "XDG_STATE_HOME": str(home / ".state"),
               "CTXAGENT_LOCAL_MODEL": "/nonexistent", "CTXAGENT_BASE_URL": server.base_url,
               "CTXAGENT_MODEL": "fake-model", "CTXAGENT_API_KEY": "sk-bench", **RAY_ENV}
        args = [sys.executable, "-m", "ctxagent", "batch", str(tasks), "--out", str(run / "out"), "--yes", "--json",
                "--workers", str(workers), "--backend", backend]
        if address:
            args += ["--ray-address", address]
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=900)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    end = events[-1]
    if done.returncode != 0 or end.get("unfinished"):
        raise SystemExit(f"batch failed ({backend}, {workers}): {done.stderr[-2000:]}")
    wall = end["wall_time_s"]
    overhead = wall * workers / n if not latency else None  # an instant model: every second is ours
    return {"backend": backend, "workers": workers, "latency": latency, "wall_s": wall,
            "tasks_per_min": 60 * n / wall, "overhead_s": overhead}


def start_ray(root: Path) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, **RAY_ENV, "PYTHONPATH": str(ROOT), "TMPDIR": str(root)}
    head = subprocess.Popen([sys.executable, "-c", HEAD, str(root / "ray")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                            start_new_session=True)
    return head, head.stdout.readline().strip()  # type: ignore[union-attr]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per model reply in the second pass")
    parser.add_argument("--backends", default="local,ray")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bt", dir="/tmp") as tmp:
        root = Path(tmp)
        head, address = (start_ray(root) if "ray" in args.backends else (None, None))
        try:
            for backend in args.backends.split(","):
                for latency in (0.0, args.latency):
                    for workers in (1, 2, 4):
                        row = run_once(root, args.tasks, backend, workers, latency,
                                       address if backend == "ray" else None)
                        rows.append(row)
                        print(json.dumps(row), flush=True)
        finally:
            if head is not None:
                head.stdin.close()  # type: ignore[union-attr]
                head.wait(timeout=120)
    print("\n| backend | model s/reply | workers | wall s | tasks/min | speed-up | overhead s/task |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        base = next(r for r in rows if r["backend"] == row["backend"] and r["latency"] == row["latency"]
                    and r["workers"] == 1)
        print(f"| {row['backend']} | {row['latency']} | {row['workers']} | {row['wall_s']:.2f} | "
              f"{row['tasks_per_min']:.1f} | {row['tasks_per_min'] / base['tasks_per_min']:.2f} | "
              f"{'-' if row['overhead_s'] is None else format(row['overhead_s'], '.2f')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
