"""Finding F2 of the break test as a class: a repository's own config
must not make git READ files outside the workspace (blame.ignoreRevsFile, mailmap.file,
include.path, includeIf, core.excludesFile, core.attributesFile...), with or without
the jail. git runs on a view of the repository whose config holds only allow-listed
keys; the repository's real objects, refs, work tree and in-tree files still count."""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest

from ctxagent.shell.commands.git import git_env
from ctxagent.shell.commands.git_repo import SAFE_KEYS, prepare_git_view
from ctxagent.shell.jail import jail_available
from ctxagent.shell.paths import PathContext
from ctxagent.shell.process import safe_env
from ctxagent.tools import TerminalTool
from tests.shell.helpers import make_workspace, snapshot

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
SANDBOX_MODES = [False] + ([None] if jail_available() else [])
_ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "Real Author", "GIT_AUTHOR_EMAIL": "real@example.com",
        "GIT_COMMITTER_NAME": "Real Author", "GIT_COMMITTER_EMAIL": "real@example.com"}
LEAK = "sk-OUTSIDE[LEAKED"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=_ENV, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = make_workspace(tmp_path)
    git(ws, "init", "-q", "-b", "main", ".")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "first commit")
    (ws / "a.txt").write_text("changed\n")
    (ws / "README.md").write_text("# changed readme\n")
    (ws / "untracked.txt").write_text("new\n")
    return ws


def _outside(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / "outside" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return str(path)


# (config key, outside file text, command, text in the output iff git read the file)
OUTSIDE_READS = [
    ("blame.ignoreRevsFile", f"{LEAK}\n", "git blame a.txt", LEAK),
    ("mailmap.file", f"{LEAK} <real@example.com>\n", "git log --format=%aN", LEAK),
    ("mailmap.file", f"{LEAK} <real@example.com>\n", "git log --use-mailmap -1", LEAK),
    ("mailmap.file", f"{LEAK} <real@example.com>\n", "git blame src/main.py", LEAK),
    ("include.path", f"[pretty]\n\tleak = format:{LEAK}\n", "git log --pretty=leak", LEAK),
    ("includeIf.gitdir:/.path", f"[pretty]\n\tleak = format:{LEAK}\n", "git log --pretty=leak", LEAK),
    ("core.attributesFile", "*.txt binary\n", "git diff", "Binary files"),
    ("core.excludesFile", "untracked.txt\n", "git status --short", "!untracked.txt"),
    ("diff.orderFile", "a.txt\n*\n", "git diff HEAD --name-only", "a.txt\nREADME.md"),
]


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
@pytest.mark.parametrize("key,text,command,read_marker", OUTSIDE_READS)
def test_F2_repository_config_cannot_make_git_read_outside_files(repo, tmp_path, sandbox, key, text, command,
                                                                   read_marker):
    git(repo, "config", "log.mailmap", "true")
    git(repo, "config", key, _outside(tmp_path, "file", text))
    before = snapshot(repo)
    result = TerminalTool(workspace=repo, timeout=20, sandbox=sandbox).execute({"command": command})
    assert result.ok, result.content
    if read_marker.startswith("!"):
        assert read_marker[1:] in result.content, result.content  # not hidden by the outside file
    else:
        assert read_marker not in result.content, result.content
    assert snapshot(repo) == before


def test_F2_plain_git_does_read_them(repo, tmp_path):
    """The attack is real: without the view, git prints the outside file's first line."""
    git(repo, "config", "blame.ignoreRevsFile", _outside(tmp_path, "revs", f"{LEAK}\n"))
    proc = subprocess.run(["git", "-c", "blame.ignoreRevsFile=", "blame", "a.txt"], cwd=repo, env=_ENV,
                          capture_output=True, text=True)
    assert LEAK in proc.stderr


def test_F2_the_view_config_holds_only_allow_listed_keys(repo, tmp_path):
    dangerous = {
        "core.fsmonitor": "touch x", "core.hooksPath": "/tmp", "core.pager": "sh", "core.worktree": str(repo),
        "core.excludesFile": "/nonexistent/file", "core.attributesFile": "/nonexistent/file", "core.sshCommand": "sh",
        "include.path": "/nonexistent/file", "blame.ignoreRevsFile": "/nonexistent/file", "mailmap.file": "/nonexistent/file",
        "mailmap.blob": "HEAD:x", "commit.template": "/nonexistent/file", "diff.orderFile": "/nonexistent/file",
        "filter.x.clean": "sh", "diff.x.textconv": "sh", "diff.external": "sh", "pretty.x": "format:%G?",
        "alias.st": "!sh", "gpg.program": "sh", "remote.origin.url": "/elsewhere", "user.signingKey": "/k",
        "fsck.skipList": "/nonexistent/file", "http.sslCAInfo": "/nonexistent/file", "log.showSignature": "true",
    }
    for key, value in dangerous.items():
        git(repo, "config", key, value)
    git(repo, "config", "branch.main.remote", "origin")
    git(repo, "config", "diff.renames", "copies")
    ctx = PathContext(root=str(repo.resolve()), cwd=str(repo.resolve()))
    env = {**safe_env(home=str(tmp_path), cwd=ctx.cwd), **git_env(ctx)}
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    view = prepare_git_view(ctx.cwd, ctx, env, str(run_dir))
    config = configparser.RawConfigParser()
    config.read(Path(view.env["GIT_DIR"]) / "config")
    keys = {f"{s}.{k}" for s in config.sections() for k in config[s]}
    assert keys == {"core.bare", "core.repositoryformatversion", "core.filemode", 'branch "main".remote',
                    "diff.renames"}
    assert not any(SAFE_KEYS.fullmatch(k.lower()) for k in dangerous)
    assert not (Path(view.env["GIT_DIR"]) / "hooks").exists()


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
def test_F2_what_belongs_to_the_repository_still_counts(repo, sandbox):
    """In-tree .mailmap and .gitattributes, branch tracking, sha256 extension, subdirs."""
    (repo / ".mailmap").write_text("Mapped Name <real@example.com>\n")
    (repo / ".gitattributes").write_text("*.md binary\n")
    git(repo, "add", ".mailmap", ".gitattributes")
    git(repo, "commit", "-q", "-m", "mailmap")
    (repo / "README.md").write_text("changed\n")
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    git(repo, "config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
    git(repo, "config", "branch.main.remote", "origin")
    git(repo, "config", "branch.main.merge", "refs/heads/main")
    tool = TerminalTool(workspace=repo, timeout=20, sandbox=sandbox)
    assert "Mapped Name" in tool.run({"command": "git log --use-mailmap --format=%aN -1"})
    assert "Binary files" in tool.run({"command": "git diff README.md"})
    assert "up to date with 'origin/main'" in tool.run({"command": "git status"})
    tool.run({"command": "cd src"})
    assert tool.run({"command": "git ls-files"}) == "main.py"


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
def test_F2_sha256_repositories_work(tmp_path, sandbox):
    ws = make_workspace(tmp_path)
    git(ws, "init", "-q", "--object-format=sha256", ".")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "sha256 commit")
    result = TerminalTool(workspace=ws, timeout=20, sandbox=sandbox).run({"command": "git log --format=%H%n%s"})
    assert len(result.splitlines()[0]) == 64 and "sha256 commit" in result


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
def test_F2_a_linked_worktree_may_keep_its_repository_outside(tmp_path, sandbox):
    main = make_workspace(tmp_path / "main")
    git(main, "init", "-q", "-b", "main", ".")
    git(main, "add", ".")
    git(main, "commit", "-q", "-m", "in main")
    git(main, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "feature")
    tool = TerminalTool(workspace=tmp_path / "wt", timeout=20, sandbox=sandbox)
    assert "in main" in tool.run({"command": "git log --oneline"})
    assert "On branch feature" in tool.run({"command": "git status"})


def test_F2_a_git_file_pointing_at_another_repository_is_refused(tmp_path):
    other = make_workspace(tmp_path / "other")
    git(other, "init", "-q", ".")
    git(other, "add", ".")
    git(other, "commit", "-q", "-m", "private history")
    ws = make_workspace(tmp_path)
    (ws / ".git").write_text(f"gitdir: {other / '.git'}\n")
    result = TerminalTool(workspace=ws, timeout=20).execute({"command": "git log"})
    assert not result.ok and "outside the workspace" in result.content
    assert "private history" not in result.content
