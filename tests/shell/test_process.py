"""The pipeline runner: process groups killed on timeout (T08), scrubbed environment,
stdin from /dev/null, output capped across stdout and stderr, the bubblewrap jail."""

from __future__ import annotations

import os
import time

import pytest

from ctxagent.shell.jail import jail_available, jail_prefix
from ctxagent.shell.output import HeadTailBuffer, truncate_output
from ctxagent.shell.process import run_pipeline, safe_env
from ctxagent.tools import TerminalTool
from tests.shell.helpers import make_workspace

needs_jail = pytest.mark.skipif(not jail_available(), reason="bubblewrap does not work here")


def _alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its reaper counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_dead(pid: int) -> bool:
    for _ in range(50):
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("jailed", [False, True] if jail_available() else [False])
def test_T08_timeout_kills_the_whole_process_group(tmp_path, jailed):
    prefix = jail_prefix(workspace=str(tmp_path), cwd=str(tmp_path), scratch=str(tmp_path)) if jailed else None
    script = "sleep 30 & echo $!; sleep 30"
    result = run_pipeline([["sh", "-c", script], ["cat"]], cwd=str(tmp_path), env=safe_env(home=str(tmp_path), cwd=str(tmp_path)),
                          timeout=1, max_output=1000, prefix=prefix)
    assert result.timed_out
    if not jailed:  # inside the jail the pid is in another pid namespace
        assert _wait_dead(int(result.stdout.split()[0]))
    assert all(code is None or code < 0 for code in result.returncodes), result


def test_T08_a_grandchild_holding_the_pipe_does_not_hang_the_tool(tmp_path):
    env = safe_env(home=str(tmp_path), cwd=str(tmp_path))
    result = run_pipeline([["sh", "-c", "(sleep 30 &) ; echo started"]], cwd=str(tmp_path), env=env,
                          timeout=1, max_output=1000)
    assert result.stdout.strip() == "started"
    assert result.timed_out  # the orphan kept stdout open; its group was killed


def test_environment_is_built_from_an_allow_list(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    monkeypatch.setenv("MY_PASSWORD", "hunter2")
    monkeypatch.setenv("LD_PRELOAD", "/tmp/evil.so")
    monkeypatch.setenv("TZ", "UTC")
    env = safe_env(home=str(tmp_path), cwd=str(tmp_path))
    result = run_pipeline([["env"]], cwd=str(tmp_path), env=env, timeout=10, max_output=10000)
    names = {line.split("=", 1)[0] for line in result.stdout.splitlines()}
    assert names <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TERM", "PWD", "PAGER", "NO_COLOR", "TZ"}
    assert "secret" not in result.stdout and "hunter2" not in result.stdout
    assert f"HOME={tmp_path}" in result.stdout


def test_stdin_is_dev_null_and_exit_status_is_reported(tmp_path):
    tool = TerminalTool(workspace=make_workspace(tmp_path), timeout=10)
    assert tool.run({"command": "cat"}) == "(no output)"
    assert tool.run({"command": "grep nomatch a.txt"}) == "(no output)\n[exit status 1]"
    text = tool.run({"command": "cat missing.txt | sort"})
    assert "[stderr]\ncat: missing.txt: No such file or directory" in text
    assert "[stage 1: exit status 1]" in text
    assert tool.run({"command": "cat a.txt | head -1"}) == "b 2"  # SIGPIPE in stage 1 is not news


def test_output_cap_is_shared_by_stdout_and_stderr(tmp_path):
    env = safe_env(home=str(tmp_path), cwd=str(tmp_path))
    script = "i=0; while [ $i -lt 3000 ]; do echo out$i; echo err$i >&2; i=$((i+1)); done"
    result = run_pipeline([["sh", "-c", script]], cwd=str(tmp_path), env=env, timeout=20, max_output=4000)
    assert len(result.stdout.encode()) + len(result.stderr.encode()) <= 4000
    assert result.stdout.startswith("out0") and result.stdout.rstrip().endswith("out2999")
    assert result.stderr.startswith("err0") and "bytes of output dropped" in result.stderr


def test_head_tail_buffer_keeps_bounded_memory():
    buf = HeadTailBuffer(100)
    for i in range(10000):
        buf.feed(f"line {i}\n".encode())
    assert len(buf.head) == 100 and len(buf.tail) == 100 and buf.total > 80000
    text = buf.render()
    assert text.startswith("line 0\n") and text.endswith("line 9999\n")


def test_small_output_is_returned_whole():
    assert truncate_output("héllo ─".encode(), 100) == "héllo ─"


@needs_jail
def test_the_jail_is_read_only_and_has_no_network(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = safe_env(home=str(scratch), cwd=str(ws))
    prefix = jail_prefix(workspace=str(ws), cwd=str(ws), scratch=str(scratch))
    script = f"touch {ws}/x; touch {tmp_path}/y; touch {scratch}/z && echo scratch-ok; cat /sys/class/net/*/operstate 2>/dev/null | wc -l"
    result = run_pipeline([["sh", "-c", script]], cwd=str(ws), env=env, timeout=10, max_output=10000, prefix=prefix)
    assert "Read-only file system" in result.stderr
    assert not (ws / "x").exists() and not (tmp_path / "y").exists()
    assert "scratch-ok" in result.stdout


def test_sandbox_true_requires_a_working_jail(tmp_path):
    tool = TerminalTool(workspace=make_workspace(tmp_path), timeout=10, sandbox=True)
    result = tool.execute({"command": "ls"})
    assert result.ok == jail_available()


def test_missing_program_is_reported_without_running_anything(tmp_path, monkeypatch):
    monkeypatch.setattr("ctxagent.shell.programs.SAFE_PATH", str(tmp_path))
    tool = TerminalTool(workspace=make_workspace(tmp_path), timeout=10)
    result = tool.execute({"command": "ls | sort"})
    assert not result.ok and "not installed" in result.content


def test_constructor_follows_the_textbook(tmp_path):
    ws = tmp_path / "new" / "ws"
    tool = TerminalTool(workspace=str(ws), timeout=5, max_output_size=1000)
    assert ws.is_dir() and tool.workspace == ws.resolve() and tool.pwd() == str(ws.resolve())
    assert tool.schema()["function"]["parameters"]["required"] == ["command"]
    assert not tool.execute({}).ok and not tool.execute({"command": "  "}).ok
    with pytest.raises(Exception):
        TerminalTool(workspace=str(ws), timeout=0)
    assert os.path.isdir(ws)
