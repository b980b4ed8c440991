"""Ctrl-C for real: SIGINT to the `ctxagent run` process while the model is streaming."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from tests.e2e.conftest import ctxagent_exe, model_env
from tests.support.fake_openai import text


def test_sigint_mid_stream_exits_130_and_records_the_interruption(fake_server, env, repo: Path) -> None:
    server = fake_server([text("a slow answer " * 200, chunk_size=2, delay=0.02)])
    proc = subprocess.Popen([*ctxagent_exe(), "run", "hi", "--repo", str(repo), "--json"],
                            env={**env, **model_env(server)}, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stdout:
        lines.append(json.loads(line))
        if lines[-1]["type"] == "text_delta":
            proc.send_signal(signal.SIGINT)
            break
    rest, err = proc.communicate(timeout=60)
    lines += [json.loads(line) for line in rest.splitlines()]
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert lines[-2]["type"] == "turn_end" and lines[-2]["reason"] == "interrupted"
    [path] = (repo / ".ctxagent" / "sessions").glob("*.jsonl")
    records = [json.loads(x) for x in path.read_text().splitlines()]
    assert any(r["kind"] == "event" and r["event"]["type"] == "turn_end" and r["event"]["reason"] == "interrupted"
               for r in records)
