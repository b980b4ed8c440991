"""Snapshot bytes and write time of a 100-call session: the old format against the new, one run.

Usage: python benchmarks/snapshot_size.py [--calls 100] [--modules 30]

A real `ctxagent run` against the fake server; old bytes computed from the same snapshots
as version 1 wrote them, write times from replaying them with both writers. Target
(issue 15 item 18): new bytes under 10% of old. Method: docs/benchmarks.md ("Snapshot size").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxagent.context.record.objects import flush_all  # noqa: E402
from ctxagent.context.record.snapshot import load_snapshot_file, write_side_snapshot, write_snapshot  # noqa: E402
from ctxagent.redaction import redact  # noqa: E402
from ctxagent.storage.files import atomic_write_bytes, json_bytes  # noqa: E402
from tests.support.fake_openai import FakeOpenAI, text, tool_calls  # noqa: E402

KEY = "sk-bench-0123456789abcdefghij"


def make_repo(root: Path, modules: int) -> None:
    """`modules` files of ~2.5 KB (60 short functions) in a git repository with one commit."""
    (root / "pkg").mkdir(parents=True)
    for i in range(modules):
        body = "".join(f"def parse_field_{i}_{j}(record, default=None):\n    return record.get('f{j}', default)\n\n"
                       for j in range(30))
        (root / "pkg" / f"mod{i}.py").write_text(f'"""Module {i}."""\n\n{body}', encoding="utf-8")
    (root / "README.md").write_text("# bench\n", encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def script(calls: int, modules: int) -> list[dict]:
    """calls-1 tool calls of four kinds in turn, then a final answer."""
    steps = []
    for n in range(calls - 1):
        kind = n % 4
        if kind == 0:
            call = ("terminal", {"command": f"cat pkg/mod{(n // 4) % modules}.py"})
        elif kind == 1:
            call = ("terminal", {"command": f"grep -n parse_field_{n % modules}_1 -r pkg"})
        elif kind == 2:
            call = ("terminal", {"command": "ls pkg"})
        else:
            call = ("todo", {"action": "add", "content": f"check field {n} of the parser"})
        steps.append(tool_calls([(call[0], json.dumps(call[1]))]))
    return steps + [text("All fields checked.")]


def run_session(repo: Path, home: Path, base_url: str) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "PYTHONPATH": str(ROOT), "CTXAGENT_LOCAL_MODEL": "/nonexistent/model.gguf", "CTXAGENT_BASE_URL": base_url,
           "CTXAGENT_MODEL": "fake-model", "CTXAGENT_API_KEY": KEY}
    proc = subprocess.run([sys.executable, "-m", "ctxagent", "run", "check every field", "--repo", str(repo),
                           "--yes", "--max-steps", "1000"], env=env, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"ctxagent run failed ({proc.returncode}):\n{proc.stderr[-2000:]}")


def old_write(folder: Path, n: int, record: dict) -> None:
    """What version 1 did per call: scrub everything, JSON of the whole record, one fsynced file."""
    clean = {**record, "version": 1}
    for key in ("request", "report", "summary_calls"):
        if key in clean:
            clean[key] = redact(clean[key], [KEY])
    atomic_write_bytes(folder / f"{n}.json", json_bytes(clean, indent=1, default=str), mode=0o644, replace=False)


def new_write(root: Path, n: int, record: dict) -> None:
    if "kind" in record:
        details = {k: v for k, v in record.items() if k in ("made_for", "tokens", "usage", "error")}
        write_side_snapshot(root, "replay", n, record["kind"], record["request"], details, secrets=[KEY])
    else:
        write_snapshot(root, "replay", n, record["request"], record.get("report") or {}, secrets=[KEY],
                       summary_calls=record.get("summary_calls"))


def timed(write, target: Path, records: dict[int, dict]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of writing every record with `write`."""
    cpu, wall = time.process_time(), time.perf_counter()
    for n, record in records.items():
        write(target, n, record)
    flush_all()
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--modules", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo, home = Path(tmp) / "repo", Path(tmp) / "home"
        make_repo(repo, args.modules)
        home.mkdir()
        with FakeOpenAI(script(args.calls, args.modules)) as server:
            run_session(repo, home, server.base_url)
            sent = len(server.requests)
        [folder] = (repo / ".ctxagent" / "snapshots").iterdir()
        files = {int(p.stem): p for p in folder.glob("*.json")}
        records = {n: load_snapshot_file(files[n]) for n in sorted(files)}
        old_bytes = sum(len(json_bytes({**r, "version": 1}, indent=1, default=str)) for r in records.values())
        new_bytes = sum(p.stat().st_size for p in folder.iterdir())
        if not (folder / "objects.jsonl").exists():
            raise SystemExit(f"no objects.jsonl in {folder}: {sorted(p.name for p in folder.iterdir())[:5]}")
        objects_bytes = (folder / "objects.jsonl").stat().st_size
        old_dir, new_root = Path(tmp) / "old", Path(tmp) / "new"
        old_dir.mkdir()
        old_cpu, old_wall = timed(old_write, old_dir, records)
        new_cpu, new_wall = timed(new_write, new_root, records)
    print(f"model calls sent: {sent}; snapshots: {len(records)} (session {folder.name})")
    print(f"old format: {old_bytes:,} bytes; new format: {new_bytes:,} bytes "
          f"= {100 * new_bytes / old_bytes:.1f}% (target < 10%); of which objects.jsonl {objects_bytes:,}")
    print(f"write, all calls: old {old_cpu * 1000:.0f} ms CPU / {old_wall * 1000:.0f} ms wall; "
          f"new {new_cpu * 1000:.0f} ms CPU / {new_wall * 1000:.0f} ms wall")
    print(f"per call: old {old_wall * 1000 / len(records):.2f} ms, new {new_wall * 1000 / len(records):.2f} ms wall")
    return 0 if new_bytes < 0.1 * old_bytes else 1


if __name__ == "__main__":
    raise SystemExit(main())
