"""Issue 17 S3 as a class: git follows what the git directory holds, so an entry of
`.git` that leads outside it (a symbolic link, a FIFO, an alternates file, a `.git`
file or link, `commondir`) is refused before git runs, with and without the jail; a
repository git made itself, linked worktrees, submodules and alternates inside the
workspace still work, and hooks never run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ctxagent.tools import TerminalTool
from tests.shell.helpers import make_workspace, snapshot
from tests.shell.test_git_config import _ENV, SANDBOX_MODES, git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
LEAK = "LEAKED-OUTSIDE-LINE"
PRIVATE = "PRIVATE-HISTORY"


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """root/ws: a repository with two commits; root/other: another repository;
    root/secret.txt: an outside file."""
    root = tmp_path_factory.mktemp("s3")
    ws = make_workspace(root)
    git(ws, "init", "-q", "-b", "main", ".")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "first commit")
    (ws / "a.txt").write_text("second\n")
    git(ws, "commit", "-q", "-am", "second commit")
    other = root / "other"
    other.mkdir()
    (other / "p.txt").write_text("private\n")
    git(other, "init", "-q", "-b", "main", ".")
    git(other, "add", ".")
    git(other, "commit", "-q", "-m", PRIVATE)
    (root / "secret.txt").write_text(f"{LEAK} one\n{LEAK} two\n")
    return root


@pytest.fixture
def root(template, tmp_path) -> Path:
    dest = tmp_path / "t"
    shutil.copytree(template, dest, symlinks=True)
    return dest


def _run(ws: Path, command: str, sandbox) -> tuple[bool, str]:
    result = TerminalTool(workspace=ws, timeout=20, sandbox=sandbox).execute({"command": command})
    return result.ok, result.content


def _assert_git_refused(root: Path, command: str, sandbox, word: str) -> None:
    ws = root / "ws"
    before = snapshot(ws)
    ok, content = _run(ws, command, sandbox)
    assert not ok and "not allowed" in content and word in content, content
    assert LEAK not in content and PRIVATE not in content, content
    assert str(root / "secret.txt") not in content and str(root / "other") not in content, content
    assert snapshot(ws) == before


# (entry of .git made a symbolic link to the outside file, a command that reads it)
FILE_LINKS = [
    ("objects/info/alternates", "git log --oneline"),
    ("info/grafts", "git log --oneline"),
    ("shallow", "git status"),
    ("packed-refs", "git status"),
    ("rebase-merge/git-rebase-todo", "git status"),
    ("MERGE_HEAD", "git status"),
    ("ORIG_HEAD", "git log ORIG_HEAD"),
    ("logs/HEAD", "git log -g"),
    ("info/exclude", "git status --short"),
    ("info/attributes", "git diff HEAD~1"),
    ("info/sparse-checkout", "git status"),
    ("objects/info/commit-graph", "git log"),
    ("objects/info/http-alternates", "git log"),
    ("description", "git status"),
    ("index", "git status"),
    ("config", "git status"),
    ("refs/heads/main", "git log"),
]


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
@pytest.mark.parametrize("entry,command", FILE_LINKS)
def test_s3_a_git_entry_linked_outside_is_refused(root, entry, command, sandbox):
    path = root / "ws" / ".git" / entry
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    path.symlink_to(root / "secret.txt")
    _assert_git_refused(root, command, sandbox, entry)


@pytest.mark.parametrize("entry", ["shallow", "packed-refs", "info/grafts", "rebase-merge/git-rebase-todo"])
def test_s3_plain_git_does_print_the_outside_file(root, entry):
    """The attack is real: git prints lines of the linked file in its messages."""
    gitdir = root / "ws" / ".git"
    (gitdir / entry).parent.mkdir(exist_ok=True)
    (gitdir / entry).symlink_to(root / "secret.txt")
    if entry.startswith("rebase-merge"):
        for name in ("head-name", "onto", "interactive"):
            (gitdir / "rebase-merge" / name).write_text("refs/heads/main\n")
    proc = subprocess.run(["git", "status"], cwd=root / "ws", env=_ENV, capture_output=True, text=True)
    seen = proc.stdout + proc.stderr
    if entry == "info/grafts":  # grafts: an unparsable line is reported, as is a shallow line
        seen += subprocess.run(["git", "log"], cwd=root / "ws", env=_ENV, capture_output=True, text=True).stderr
    assert LEAK in seen


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
@pytest.mark.parametrize("entry", ["objects", "refs", "logs", "info", "refs/heads", "objects/pack"])
def test_s3_a_git_directory_linked_to_another_repository_is_refused(root, entry, sandbox):
    gitdir = root / "ws" / ".git"
    shutil.rmtree(gitdir / entry, ignore_errors=True)
    (gitdir / entry).symlink_to(root / "other" / ".git" / entry)
    _assert_git_refused(root, "git log --all --oneline", sandbox, entry)


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
@pytest.mark.parametrize("entry", ["shallow", "info/exclude", "rebase-merge/done", "objects/info/alternates"])
def test_s3_special_files_in_the_git_directory_are_refused(root, entry, sandbox):
    """A FIFO (a tar archive can hold one) would block git until the timeout."""
    path = root / "ws" / ".git" / entry
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    _assert_git_refused(root, "git status", sandbox, "FIFO")


def test_s3_a_link_to_a_device_is_refused_even_inside(root):
    gitdir = root / "ws" / ".git"
    (gitdir / "shallow").symlink_to("/dev/zero")
    _assert_git_refused(root, "git status", False, "shallow")


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
def test_s3_links_that_stay_inside_the_git_directory_are_fine(root, sandbox):
    gitdir = root / "ws" / ".git"
    (gitdir / "info").mkdir(exist_ok=True)
    (gitdir / "my-exclude").write_text("untracked.txt\n")
    (gitdir / "info" / "exclude").unlink(missing_ok=True)
    (gitdir / "info" / "exclude").symlink_to("../my-exclude")
    (gitdir / "dangling").symlink_to("nothing-here")
    (root / "ws" / "untracked.txt").write_text("x\n")
    (root / "ws" / "shown.txt").write_text("x\n")
    ok, content = _run(root / "ws", "git status --short", sandbox)
    assert ok and "shown.txt" in content and "untracked.txt" not in content, content


# ---- the git directory itself elsewhere: .git as a link or a file, commondir


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
def test_s3_dot_git_as_a_link_to_another_repository_is_refused(root, sandbox):
    ws = root / "ws"
    shutil.rmtree(ws / ".git")
    (ws / ".git").symlink_to(root / "other" / ".git")
    _assert_git_refused(root, "git log", sandbox, "outside the workspace")


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
@pytest.mark.parametrize("pointer", ["absolute", "relative"])
def test_s3_a_git_file_in_a_subdirectory_pointing_outside_is_refused(root, sandbox, pointer):
    """A submodule-style `sub/.git` file naming another repository's git directory."""
    sub = root / "ws" / "src"
    target = root / "other" / ".git"
    (sub / ".git").write_text(f"gitdir: {target if pointer == 'absolute' else os.path.relpath(target, sub)}\n")
    tool = TerminalTool(workspace=root / "ws", timeout=20, sandbox=sandbox)
    tool.run({"command": "cd src"})
    result = tool.execute({"command": "git log"})
    assert not result.ok and "outside the workspace" in result.content, result.content
    assert PRIVATE not in result.content and str(target) not in result.content


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
@pytest.mark.parametrize("how", ["content", "link"])
def test_s3_commondir_leading_outside_is_refused(root, sandbox, how):
    """A worktree-style git directory inside the workspace whose commondir names
    another repository (as a path in the file, or the file linked outside)."""
    ws = root / "ws"
    fake = ws / ".git" / "worktrees" / "w"
    fake.mkdir(parents=True)
    (fake / "HEAD").write_text("ref: refs/heads/main\n")
    (fake / "gitdir").write_text(str(ws / "src" / ".git") + "\n")
    if how == "content":
        (fake / "commondir").write_text(str(root / "other" / ".git") + "\n")
    else:
        (root / "commondir-outside").write_text(str(root / "other" / ".git") + "\n")
        (fake / "commondir").symlink_to(root / "commondir-outside")
    (ws / "src" / ".git").write_text(f"gitdir: {fake}\n")
    tool = TerminalTool(workspace=ws, timeout=20, sandbox=sandbox)
    tool.run({"command": "cd src"})
    result = tool.execute({"command": "git log --all"})
    assert not result.ok and "not allowed" in result.content and PRIVATE not in result.content, result.content


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
def test_s3_a_real_submodule_and_worktree_inside_the_workspace_work(root, sandbox):
    ws = root / "ws"
    lib = root / "libsrc"
    shutil.copytree(root / "other", lib, symlinks=True)
    git(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(ws, "commit", "-q", "-m", "add lib")
    git(ws, "worktree", "add", "-q", str(ws / "wt"), "-b", "feature")
    tool = TerminalTool(workspace=ws, timeout=20, sandbox=sandbox)
    tool.run({"command": "cd lib"})
    assert PRIVATE in tool.run({"command": "git log --oneline"})  # the submodule's own history
    tool.run({"command": "cd ../wt"})
    assert "On branch feature" in tool.run({"command": "git status"})


# ---- alternates: another repository's objects


def _alternates(ws: Path, text: str) -> None:
    (ws / ".git" / "objects" / "info" / "alternates").write_text(text)


def _private_sha(root: Path) -> str:
    return git(root / "other", "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
@pytest.mark.parametrize("spelling", ["absolute", "relative", "quoted", "second line", "trailing slash"])
def test_s3_alternates_outside_the_workspace_are_refused(root, sandbox, spelling):
    objects = root / "other" / ".git" / "objects"
    own = root / "ws" / ".git" / "objects"
    text = {"absolute": f"{objects}\n", "relative": os.path.relpath(objects, own) + "\n",
            "quoted": '"' + str(objects).replace("/", "\\057") + '"\n',
            "second line": f"# comment\n{own}\n{objects}\n", "trailing slash": f"{objects}/\n"}[spelling]
    _alternates(root / "ws", text)
    _assert_git_refused(root, f"git show {_private_sha(root)}", sandbox, "alternates")


def test_s3_plain_git_reads_objects_of_an_outside_alternate(root):
    _alternates(root / "ws", f"{root / 'other' / '.git' / 'objects'}\n")
    proc = subprocess.run(["git", "show", _private_sha(root)], cwd=root / "ws", env=_ENV, capture_output=True, text=True)
    assert PRIVATE in proc.stdout


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
def test_s3_alternates_inside_the_workspace_work_but_their_own_links_count(root, sandbox):
    ws = root / "ws"
    shutil.copytree(root / "other", ws / "vendored", symlinks=True)
    _alternates(ws, f"{ws / 'vendored' / '.git' / 'objects'}\n")
    ok, content = _run(ws, f"git show --format=%s -s {_private_sha(root)}", sandbox)
    assert ok and PRIVATE in content, content  # its history is in the workspace anyway
    chained = ws / "vendored" / ".git" / "objects" / "info"
    chained.mkdir(exist_ok=True)
    (chained / "alternates").write_text(f"{root / 'other' / '.git' / 'objects'}\n")
    _assert_git_refused(root, "git log", sandbox, "alternates")
    (chained / "alternates").unlink()
    pack = ws / "vendored" / ".git" / "objects" / "pack"
    (pack / "x.pack").symlink_to(root / "secret.txt")
    _assert_git_refused(root, "git log", sandbox, "x.pack")


# ---- the repository's config and hooks


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
@pytest.mark.parametrize("key", ["include.path", "includeIf.onbranch:main.path", "includeIf.gitdir:**.path"])
def test_s3_config_includes_of_outside_files_are_not_followed(root, sandbox, key):
    """(test_git_config holds the absolute include.path; here a path relative to .git)"""
    (root / "inc.cfg").write_text(f"[pretty]\n\tleak = format:{LEAK}\n")
    git(root / "ws", "config", key, "../../inc.cfg")
    ok, content = _run(root / "ws", "git log --pretty=leak -1", sandbox)
    assert LEAK not in content


HOOKS = ("post-index-change", "reference-transaction", "post-checkout", "pre-auto-gc", "fsmonitor-watchman",
         "post-rewrite", "pre-commit", "push-to-checkout")


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
@pytest.mark.parametrize("where", ["hooks", "hooksPath"])
def test_s3_hooks_never_run(root, sandbox, where):
    ws = root / "ws"
    marker = root / "fired"
    hooks = ws / ".git" / "hooks" if where == "hooks" else ws / "myhooks"
    hooks.mkdir(exist_ok=True)
    if where == "hooksPath":
        git(ws, "config", "core.hooksPath", str(hooks))
    for name in HOOKS:
        (hooks / name).write_text(f"#!/bin/sh\ntouch {marker}-{name}\n")
        (hooks / name).chmod(0o755)
    os.utime(ws / "a.txt", (1_000_000_000, 1_000_000_000))  # the index's stat data is stale
    for command in ("git status", "git diff", "git log -1", "git blame a.txt", "git grep second"):
        ok, content = _run(ws, command, sandbox)
        assert ok, content
    assert not list(root.glob("fired-*"))
    subprocess.run(["git", "status"], cwd=ws, env=_ENV, capture_output=True)
    assert list(root.glob("fired-*")), "plain git runs the hooks: the test would not see a hook run"
