"""Issue 15, item 3: Ctrl-C mid-answer in `ctxagent chat` (a real SIGINT to the process while the
fake server streams slowly) keeps the partial reply, marked, instead of a fabricated "Ok."."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from pathlib import Path

from tests.e2e.conftest import ctxagent_exe, model_env
from tests.support.fake_openai import text

MARK = "[interrupted by the user]"


def read_until(proc: subprocess.Popen, needle: str, timeout: float = 60) -> str:
    """Read the child's stdout until it holds `needle` (raises when it does not come)."""
    seen, deadline = "", time.monotonic() + timeout
    while needle not in seen:
        assert time.monotonic() < deadline, f"did not see {needle!r}; got:\n{seen[-2000:]}"
        if select.select([proc.stdout], [], [], 0.1)[0]:
            data = os.read(proc.stdout.fileno(), 65536)
            assert data, f"the chat ended before {needle!r}; got:\n{seen[-2000:]}"
            seen += data.decode("utf-8", "replace")
    return seen


def test_sigint_mid_answer_keeps_the_partial_reply_marked(fake_server, env, repo: Path) -> None:
    server = fake_server([text("a slow answer " * 300, chunk_size=2, delay=0.02), text("a short one")])
    proc = subprocess.Popen([*ctxagent_exe(), "chat", "--repo", str(repo)], env={**env, **model_env(server)},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        proc.stdin.write(b"explain the repo\n")
        proc.stdin.flush()
        read_until(proc, "a slow answer a slow")
        proc.send_signal(signal.SIGINT)
        read_until(proc, "interrupted")
        out, err = proc.communicate(b"shorter please\n", timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert b"a short one" in out
    messages = server.requests()[-1]["messages"]
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "user"]
    assert messages[1]["content"].endswith("explain the repo") and messages[3]["content"].endswith("shorter please")
    kept = messages[2]["content"]
    assert kept.startswith("a slow answer a slow") and kept.endswith(f"\n\n{MARK}")
    assert len(kept) < len("a slow answer " * 300)  # what had streamed, not the whole reply
    assert all(m.get("content") != "Ok." for m in messages)
