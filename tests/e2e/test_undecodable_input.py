"""Bytes that are not UTF-8 in a task (a Latin-1 terminal, a pasted file) reach Python as
lone surrogates (surrogateescape): the run must still work and record its session."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.conftest import ctxagent_exe, model_env
from tests.support.fake_openai import text


def test_a_task_with_bytes_that_are_not_utf8(env, fake_server, repo: Path) -> None:
    server = fake_server([text("read it")])
    task = b"explain caf\xe9 in src/app.py"  # not UTF-8: Python sees 'caf\udce9'
    cmd = [*map(str.encode, ctxagent_exe()), b"run", task, b"--repo", str(repo).encode(), b"--json"]
    proc = subprocess.run(cmd, env={**env, **model_env(server), "CTXAGENT_MODEL": "gpt-4o"}, capture_output=True,
                          timeout=120)
    assert proc.returncode == 0, (proc.stdout + proc.stderr).decode("utf-8", "replace")
    assert b"Traceback" not in proc.stderr
    sent = server.requests()[0]["messages"][-1]["content"]
    assert "explain caf" in sent and "src/app.py" in sent
    sessions = list((repo / ".ctxagent" / "sessions").glob("*.jsonl"))
    assert sessions and any("explain caf" in line for line in sessions[0].read_text(encoding="utf-8", errors="replace").splitlines())
    snapshots = list((repo / ".ctxagent" / "snapshots").rglob("*.json"))
    assert snapshots and all(json.loads(p.read_text(encoding="utf-8", errors="replace")) for p in snapshots)
    records = [json.loads(line) for line in sessions[0].read_text(encoding="utf-8").splitlines() if line.strip()]
    tasks = [r["message"]["content"] for r in records if r.get("kind") == "message" and r["message"].get("role") == "user"]
    assert tasks == ["explain caf\udce9 in src/app.py"]  # stored as the JSON escape, read back as it was typed
