"""Trial of 2026-12-02 (docs/trials/day-one-2026-12-02.md): a `run` stopped by Ctrl-C said
"interrupted: interrupted; ... send a new message to go on", a message `run` cannot take.
It says what happened once, and the command that goes on with the same session."""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

from tests.e2e.conftest import ctxagent_exe, model_env
from tests.support.fake_openai import text


def test_ctrl_c_in_run_names_the_resume_command(fake_server, ctxagent, env, repo: Path) -> None:
    server = fake_server([text("a slow answer " * 200, chunk_size=2, delay=0.02), text("went on")])
    proc = subprocess.Popen([*ctxagent_exe(), "run", "explain the program", "--repo", str(repo)],
                            env={**env, **model_env(server)}, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.read(6) == b"a slow"  # the answer is streaming
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    err = err.decode()
    assert proc.returncode == 130, err
    assert "interrupted: stopped by Ctrl-C; the conversation so far is kept" in err
    assert "interrupted: interrupted" not in err and "send a new message" not in err
    [session] = re.findall(r'go on with: ctxagent run --resume (\S+) "\.\.\." \(or ctxagent chat --resume \1\)', err)
    resumed = ctxagent("run", "go on", "--repo", str(repo), "--resume", session, extra_env=model_env(server))
    assert resumed.returncode == 0, resumed.stderr
    assert "went on" in resumed.stdout
    last = server.requests()[-1]["messages"]
    assert [m["content"] for m in last if m["role"] == "user"] == ["explain the program", "go on"]
    assert "[interrupted by the user]" in [m for m in last if m["role"] == "assistant"][0]["content"]


def test_a_finished_run_has_no_go_on_line(fake_server, ctxagent, repo: Path) -> None:
    proc = ctxagent("run", "hi", "--repo", str(repo), extra_env=model_env(fake_server([text("hello")])))
    assert proc.returncode == 0, proc.stderr
    assert "go on with" not in proc.stderr
