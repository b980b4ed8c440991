"""git through the terminal tool: read-only subcommands only, and a repository whose own
config tries to run programs (fsmonitor, filter drivers, textconv, external diff,
pager, gpg) must not get to run them, with or without the bubblewrap jail."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ctxagent.shell.jail import jail_available
from ctxagent.tools import TerminalTool
from tests.shell.helpers import make_workspace, snapshot

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
    "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
    "PATH": "/usr/bin:/bin",
}
SANDBOX_MODES = [False] + ([None] if jail_available() else [])


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, env=_GIT_ENV, capture_output=True, text=True, check=True)
    return proc.stdout


def make_repo(tmp_path: Path) -> Path:
    ws = make_workspace(tmp_path)
    git(ws, "init", "-q", ".")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "first commit")
    (ws / "a.txt").write_text("changed\n")
    return ws


def make_malicious_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose config runs `touch MARKERS/<name>` from every hook it can."""
    ws = make_repo(tmp_path)
    markers = tmp_path / "markers"
    markers.mkdir()
    (ws / ".gitattributes").write_text("*.txt filter=evil diff=evil\n*.md diff=ext\n")
    git(ws, "add", ".gitattributes")
    git(ws, "commit", "-q", "-m", "attributes")
    settings = {
        "core.fsmonitor": f"touch {markers}/fsmonitor; false",
        "filter.evil.clean": f"touch {markers}/clean; cat",
        "filter.evil.smudge": f"touch {markers}/smudge; cat",
        "filter.evil.process": f"touch {markers}/process; false",
        "diff.evil.textconv": f"touch {markers}/textconv; cat",
        "diff.ext.command": f"touch {markers}/diffcommand; true",
        "diff.external": f"touch {markers}/external; true",
        "core.pager": f"touch {markers}/pager; cat",
        "pager.log": f"touch {markers}/pagerlog; cat",
        "log.showSignature": "true",
        "gpg.program": f"{markers}/gpg.sh",
        "pretty.sig": "format:%G? %s",
    }
    (markers / "gpg.sh").write_text(f"#!/bin/sh\ntouch {markers}/gpg\nexit 1\n")
    (markers / "gpg.sh").chmod(0o755)
    for key, value in settings.items():
        git(ws, "config", key, value)
    (ws / "a.txt").write_text("changed again\n")
    (ws / "README.md").write_text("# changed\n")
    os.utime(ws / "a.txt", (1_000_000_000, 1_000_000_000))
    return ws, markers


def _copy(template: Path, dest: Path) -> Path:
    """Copy a prepared tree, pointing its absolute paths (git config, gpg.sh) at the copy."""
    shutil.copytree(template, dest, symlinks=True)
    for name in ("ws/.git/config", "markers/gpg.sh"):
        path = dest / name
        if path.exists():
            path.write_text(path.read_text().replace(str(template), str(dest)))
    return dest


@pytest.fixture(scope="module")
def malicious_template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("malicious")
    make_malicious_repo(root)
    return root


@pytest.fixture(scope="module")
def repo_template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    make_repo(root)
    return root


@pytest.fixture
def malicious(malicious_template, tmp_path) -> tuple[Path, Path]:
    dest = _copy(malicious_template, tmp_path / "copy")
    return dest / "ws", dest / "markers"


@pytest.fixture
def repo(repo_template, tmp_path) -> Path:
    return _copy(repo_template, tmp_path / "copy") / "ws"


def fired(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir() if p.name != "gpg.sh")


def test_the_malicious_repository_really_is_malicious(malicious):
    """Plain git runs the repository's programs (gpg only runs for signed commits)."""
    ws, markers = malicious
    subprocess.run(["git", "status"], cwd=ws, env=_GIT_ENV, capture_output=True)
    subprocess.run(["git", "diff"], cwd=ws, env=_GIT_ENV, capture_output=True)
    assert {"fsmonitor", "process"} <= set(fired(markers))
    for key in ("core.fsmonitor", "filter.evil.process"):
        git(ws, "config", "--unset", key)
    subprocess.run(["git", "diff"], cwd=ws, env=_GIT_ENV, capture_output=True)
    subprocess.run(["git", "log", "-p", "-1", "--", "a.txt"], cwd=ws, env=_GIT_ENV, capture_output=True)
    assert {"clean", "external", "textconv"} <= set(fired(markers))


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
@pytest.mark.parametrize("command", [
    "git status", "git status --short", "git diff", "git diff --stat", "git diff HEAD",
    "git diff --cached", "git log -p -2", "git log --format=%s", "git log --pretty=sig -1",
    "git show", "git show HEAD:a.txt", "git blame a.txt", "git grep -n hello",
    "git ls-files", "git log --oneline -- a.txt",
])
def test_repository_config_cannot_run_programs(malicious, sandbox, command):
    ws, markers = malicious
    tool = TerminalTool(workspace=ws, timeout=20, sandbox=sandbox)
    before = snapshot(ws)
    result = tool.execute({"command": command})
    assert result.ok, result.content
    assert fired(markers) == []
    assert snapshot(ws) == before  # .git included: not even the index's stat cache changes


def test_read_subcommands_show_the_repository(repo):
    ws = repo
    tool = TerminalTool(workspace=ws, timeout=20)
    assert "a.txt" in tool.run({"command": "git status --short"})
    assert "+changed" in tool.run({"command": "git diff"})
    assert "first commit" in tool.run({"command": "git log --oneline"})
    assert "src/main.py" in tool.run({"command": "git ls-files"})
    assert "README.md:2:hello foo" in tool.run({"command": "git grep -n hello"})
    assert "hello foo" in tool.run({"command": "git show HEAD:README.md"})
    assert "def main" in tool.run({"command": "git blame src/main.py"})
    tool.run({"command": "cd src"})
    assert "main.py" in tool.run({"command": "git ls-files"})


@pytest.mark.parametrize("command,word", [
    ("git -c core.pager=sh log", "-c"),
    ("git -C .. status", "-C"),
    ("git --git-dir=/tmp/x log", "--git-dir"),
    ("git --work-tree=/ status", "--work-tree"),
    ("git --exec-path=/tmp log", "--exec-path"),
    ("git --no-pager log", "--no-pager"),
    ("git commit -m x", "'commit'"),
    ("git checkout .", "'checkout'"),
    ("git config core.pager sh", "'config'"),
    ("git push", "'push'"),
    ("git diff --output=out.txt", "--output"),
    ("git log --ext-diff -p", "--ext-diff"),
    ("git diff --textconv", "--textconv"),
    ("git log --show-signature", "--show-signature"),
    ("git grep -O sh hello", "-O"),
    ("git grep --open-files-in-pager=sh hello", "--open-files-in-pager"),
    ("git diff --no-index a.txt /etc/passwd", "--no-index"),
    ("git log --format=%G?", "%G"),
    ("git log --pretty=format:%GS", "%G"),
    ("git status --ignore-submodules=none", "--ignore-submodules"),
    ("git grep --recurse-submodules x", "--recurse-submodules"),
    ("git blame --contents /etc/passwd a.txt", "--contents"),
    ("git diff HEAD -- ../x", "outside"),
    ("git diff /etc/passwd", "outside"),
    ("git log -c", "-c"),
    ("git", "subcommand"),
])
def test_git_refusals(repo, command, word):
    ws = repo
    tool = TerminalTool(workspace=ws, timeout=20)
    before = snapshot(ws)
    result = tool.execute({"command": command})
    assert not result.ok and word in result.content, result.content
    assert snapshot(ws) == before


def test_no_repository_above_the_workspace_is_used(tmp_path):
    git(tmp_path, "init", "-q", ".")
    ws = make_workspace(tmp_path)
    (tmp_path / "secret.txt").write_text("outside\n")
    git(tmp_path, "add", "secret.txt")
    git(tmp_path, "commit", "-q", "-m", "outside commit")
    tool = TerminalTool(workspace=ws, timeout=20)
    result = tool.run({"command": "git log"})
    assert "not a git repository" in result and "outside commit" not in result


def test_a_work_tree_outside_the_workspace_is_refused(repo):
    ws = repo
    git(ws, "config", "core.worktree", str(ws.parent))
    result = TerminalTool(workspace=ws, timeout=20).execute({"command": "git status"})
    assert not result.ok and "outside the workspace" in result.content


def test_unreadable_filter_configuration_fails_closed(repo):
    ws = repo
    with open(ws / ".git" / "config", "a") as f:
        f.write("[include]\n\tpath = /nonexistent/dir/\n[filter \"x\"\n")  # a syntax error
    result = TerminalTool(workspace=ws, timeout=20).execute({"command": "git status"})
    assert not result.ok and "filter configuration" in result.content
