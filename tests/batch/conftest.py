"""Batch fixtures: three small real git repositories, six tasks over them, a fake model whose
rules make each task's edit through the real apply_patch tool, and the real CLI in a subprocess.

Only the model is fake. Task `t3`'s first model request is held by the server until the
test kills the worker process that sent it (found by the request's client port), so a
worker dies mid-task deterministically, whatever the timing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import ctxagent_exe
from tests.support.fake_openai import FakeOpenAI, text, tool_calls

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
API_KEY = "sk-batch-SECRET-0123456789abcdef"
#: The task whose first attempt is killed.
KILLED = "t3"


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def make_repo(path: Path, files: dict[str, str]) -> Path:
    if shutil.which("git") is None:
        pytest.skip("batch working copies need git")
    path.mkdir(parents=True)
    git(path, "init", "-q")
    for name, body in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(body, encoding="utf-8")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "first")
    return path


def update_patch(path: str, old: str, new: str) -> str:
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"


def add_patch(path: str, line: str) -> str:
    return f"*** Begin Patch\n*** Add File: {path}\n+{line}\n*** End Patch\n"


class Batch:
    """Six tasks over three repositories; `expected[id]`: {file: content after the task}."""

    def __init__(self, root: Path) -> None:
        self.root = root
        alpha = make_repo(root / "alpha", {"a.txt": "one\n", "b.txt": "two\n"})
        self.alpha_first = git(alpha, "rev-parse", "HEAD").strip()
        (alpha / "a.txt").write_text("one, later\n", encoding="utf-8")  # HEAD differs from the first commit
        git(alpha, "commit", "-q", "-am", "second")
        beta = make_repo(root / "beta", {"src/app.py": "x = 1\n"})
        gamma = make_repo(root / "gamma", {"notes.md": "# notes\n"})
        (gamma / "untracked.txt").write_text("the user's own work\n", encoding="utf-8")
        self.repos = [alpha, beta, gamma]
        self.tasks = [
            {"id": "t1", "repo": "alpha", "base_commit": self.alpha_first, "task": "TASK t1: change a.txt"},
            {"id": "t2", "repo": "alpha", "task": "TASK t2: change b.txt", "test": "grep -q TWO b.txt"},
            {"id": "t3", "repo": "beta", "task": "TASK t3: change x"},
            {"instance_id": "t4", "repo": "beta", "problem_statement": "TASK t4: add a module",
             "base_commit": git(beta, "rev-parse", "HEAD").strip(), "FAIL_TO_PASS": "[]", "version": "1.0"},
            {"id": "t5", "repo": "gamma", "task": "TASK t5: change notes", "test": "grep -q nothing notes.md"},
            {"id": "t6", "repo": "gamma", "task": "TASK t6: add a file"},
        ]
        self.patches = {"t1": update_patch("a.txt", "one", "ONE"), "t2": update_patch("b.txt", "two", "TWO"),
                        "t3": update_patch("src/app.py", "x = 1", "x = 2"), "t4": add_patch("src/extra.py", "y = 3"),
                        "t5": update_patch("notes.md", "# notes", "# Notes"), "t6": add_patch("new.txt", "new")}
        self.expected = {"t1": {"a.txt": "ONE\n"}, "t2": {"b.txt": "TWO\n"}, "t3": {"src/app.py": "x = 2\n"},
                         "t4": {"src/extra.py": "y = 3\n"}, "t5": {"notes.md": "# Notes\n"}, "t6": {"new.txt": "new\n"}}
        self.file = root / "tasks.jsonl"
        self.file.write_text("".join(json.dumps(t) + "\n" for t in self.tasks), encoding="utf-8")
        self.out = root / "out"

    def rules(self, *, hold: str | None = KILLED) -> list[dict[str, Any]]:
        rules = []
        for task_id, patch in self.patches.items():
            steps = [tool_calls([("apply_patch", json.dumps({"patch": patch}))]), text(f"done {task_id}")]
            if task_id == hold:  # held until the test kills its worker (timeout: far beyond the test)
                steps.insert(0, {**text("never sent"), "barrier": {"name": f"hold-{task_id}", "count": 2,
                                                                  "timeout": 600}})
            rules.append({"contains": f"TASK {task_id}:", "steps": steps})
        return rules

    def state(self) -> list[Any]:
        """What must not change in the source repositories: every file (.git included, its
        index aside), HEAD, refs, worktrees, status."""
        out = []
        for repo in self.repos:
            status = git(repo, "status", "--porcelain", "--untracked-files=all")  # settles the index first
            files = {str(p.relative_to(repo)): hashlib.sha256(p.read_bytes()).hexdigest()
                     for p in sorted(repo.rglob("*")) if p.is_file() and p.name != "index"}
            out.append([files, git(repo, "rev-parse", "HEAD"), git(repo, "for-each-ref"),
                        git(repo, "worktree", "list", "--porcelain"), status])
        return out


@pytest.fixture
def batch(tmp_path: Path) -> Batch:
    return Batch(tmp_path)


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """A clean environment: tmp HOME/XDG, no provider variables, no offline model."""
    from tests.e2e.conftest import ROOT

    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR")}
    home = tmp_path / "home"
    home.mkdir()
    return {**keep, "PYTHONPATH": str(ROOT), "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_STATE_HOME": str(home / ".state"), "CTXAGENT_LOCAL_MODEL": "/nonexistent/model.gguf",
            "PYTHONUNBUFFERED": "1", "COLUMNS": "120"}


def model_env(server: FakeOpenAI) -> dict[str, str]:
    return {"CTXAGENT_BASE_URL": server.base_url, "CTXAGENT_MODEL": "fake-model", "CTXAGENT_API_KEY": API_KEY}


def start_batch(batch: Batch, env: dict[str, str], *args: str) -> subprocess.Popen:
    """The real `ctxagent batch` with --json, in a subprocess (stdout: events)."""
    return subprocess.Popen([*ctxagent_exe(), "batch", str(batch.file), "--out", str(batch.out), "--yes", "--json",
                             *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen) -> tuple[int, list[dict[str, Any]], str]:
    out, err = proc.communicate(timeout=300)
    return proc.returncode, [json.loads(line) for line in out.splitlines() if line.strip()], err


def wait_for_request(server: FakeOpenAI, marker: str, *, deadline_s: float = 300) -> dict[str, Any]:
    """The first request to `server` one of whose messages holds `marker` (polls its log:
    waits for the event, asserts nothing about time)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        for entry in list(server.log):
            messages = (entry.get("body") or {}).get("messages") or []
            if any(marker in str(m.get("content")) for m in messages):
                return entry
        time.sleep(0.05)
    raise AssertionError(f"no request held {marker!r}")


def pid_of_client(client_port: int, server_port: int) -> int:
    """The process holding the TCP connection 127.0.0.1:client_port -> server_port (Linux /proc)."""
    inode = None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote = fields[1], fields[2]
            if int(local.rsplit(":", 1)[1], 16) == client_port and int(remote.rsplit(":", 1)[1], 16) == server_port:
                inode = fields[9]
    assert inode, f"no connection from port {client_port}"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            links = [os.readlink(fd) for fd in (proc / "fd").iterdir()]
        except OSError:
            continue
        if f"socket:[{inode}]" in links:
            return int(proc.name)
    raise AssertionError(f"no process holds socket {inode}")


def held_worker(server: FakeOpenAI, marker: str) -> int:
    """The pid of the process whose request holding `marker` the server holds (`wait_for_request`)."""
    held = wait_for_request(server, marker)
    return pid_of_client(held["client"][1], server.port)


def applied(repo: Path, base: str, diff: str, tmp: Path) -> Path:
    """A fresh clone of `repo` at `base` with `diff` applied by git (proves the diff is right)."""
    subprocess.run(["git", "clone", "-q", str(repo), str(tmp)], check=True, capture_output=True)
    git(tmp, "checkout", "-q", base)
    subprocess.run(["git", "apply", "-"], cwd=tmp, input=diff, text=True, check=True, capture_output=True)
    return tmp
