"""Issue 15 item 2, end to end: after a real session has written `.ctxagent/` (sessions,
snapshots, the backup of the patched file, the checkpoint store), the terminal's recursive
commands, run by the model and by `ctxagent tool terminal`, show the project only; naming
`.ctxagent` still shows what is in it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import model_env
from tests.support.fake_openai import text, tool_calls

PATCH = ("*** Begin Patch\n*** Update File: src/app.py\n@@ def greet(name):\n"
         '-    return "hello " + name\n+    return "Hello, " + name + "!"\n*** End Patch\n')
NOTE = ".ctxagent/ (ctxagent's own sessions, snapshots, backups and checkpoints) was left out"


def _terminal(ctxagent, repo: Path, command: str) -> dict:
    proc = ctxagent("tool", "terminal", json.dumps({"command": command}), "--repo", str(repo), "--json")
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def _body(content: str) -> str:
    """`content` without the note saying what was left out."""
    return "\n".join(line for line in content.splitlines() if NOTE not in line)


@pytest.fixture
def used_repo(ctxagent, fake_server, repo: Path) -> tuple[Path, list[str]]:
    """`repo` after a `run` that patched src/app.py (a checkpoint), then grepped and searched
    the tree; returns it with the tool results the model got."""
    server = fake_server([
        tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]),
        tool_calls([("terminal", json.dumps({"command": 'grep -rn "def greet" .'}))]),
        tool_calls([("terminal", json.dumps({"command": "find . -name '*.json*'"}))]),
        text("done"),
    ])
    proc = ctxagent("run", "Make the greeting friendlier.", "--repo", str(repo), "--yes", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    state = repo / ".ctxagent"
    assert list((state / "sessions").glob("*.jsonl")) and list((state / "snapshots").rglob("*.json"))
    assert (state / "checkpoints").is_dir()
    results = [m["content"] for m in server.requests()[-1]["messages"] if m["role"] == "tool"]
    return repo, results


def test_the_model_sees_the_project_not_the_state(ctxagent, used_repo) -> None:
    repo, results = used_repo
    grep, find = results[1], results[2]
    assert _body(grep) == "./src/app.py:1:def greet(name):" and NOTE in grep
    assert _body(find) == "(no output)", find  # sessions/*.jsonl and snapshots/*.json are not listed
    for command, project in [
        ('grep -rn "def greet" .', "./src/app.py:1:def greet(name):"), ("grep -rl greet", "src/app.py"),
        ("find . -name app.py", "./src/app.py"), ("find . -type f", "./README.md"), ("ls -aR", "app.py"),
        ("du -a", "./src/app.py"), ("git grep -n greet", "src/app.py:1:def greet(name):"),
        ("git ls-files", "README.md"),
    ]:
        result = _terminal(ctxagent, repo, command)
        assert result["ok"] is True and project in result["content"], (command, result)
        assert ".ctxagent" not in _body(result["content"]), (command, result["content"])


def test_naming_the_state_still_shows_it(ctxagent, used_repo) -> None:
    repo, _ = used_repo
    for command, shown in [
        ("ls .ctxagent", "sessions"), ("ls -R .ctxagent/sessions", ".jsonl"),
        ("grep -rl Make .ctxagent/sessions", ".ctxagent/sessions/"), ("find .ctxagent -name '*.jsonl'", "sessions/"),
        ("du -s .ctxagent", ".ctxagent"), ("ls -a", ".ctxagent"),
    ]:
        result = _terminal(ctxagent, repo, command)
        assert result["ok"] is True and shown in result["content"] and NOTE not in result["content"], (command, result)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_committed_state_stays_out_of_git_grep(ctxagent, used_repo) -> None:
    repo, _ = used_repo
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": "/usr/bin:/bin", "HOME": str(repo)}
    for args in (["add", "-f", ".ctxagent/sessions"], ["commit", "-q", "-m", "oops, the state"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    result = _terminal(ctxagent, repo, "git grep -l Make")
    assert ".ctxagent" not in result["content"], result
    assert ".ctxagent/sessions/" in _terminal(ctxagent, repo, "git grep -l Make -- .ctxagent")["content"]
