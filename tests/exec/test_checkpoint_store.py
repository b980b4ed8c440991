"""The checkpoint store: what a snapshot holds, the user's git left alone, bad input."""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import subprocess
from pathlib import Path

import pytest

from ctxagent.exec.checkpoints import CheckpointError, CheckpointStore, FileChange
from tests.exec.kill import kill_child_after

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need git")
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def make_tree(repo: Path) -> None:
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("print('hi')\n")
    (repo / "README.md").write_text("# proj\n")
    (repo / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (repo / ".gitignore").write_text("build/\n*.log\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_bytes(b"\0" * 10)
    (repo / "debug.log").write_text("noise\n")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    repo = tmp_path / "plain"
    make_tree(repo)
    return repo


@pytest.fixture
def gitrepo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    make_tree(repo)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    (repo / "README.md").write_text("# proj, edited and not staged\n")  # the user has work in progress
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    (repo / "wip.txt").write_text("stash me\n")
    git(repo, "stash", "push", "-q", "-u", "-m", "users stash", "--", "wip.txt")
    return repo


def recorded_files(store: CheckpointStore, tree_id: str) -> list[str]:
    return store.git.run("ls-tree", "-r", "--name-only", "-z", tree_id).decode().strip("\0").split("\0")


def test_a_snapshot_holds_tracked_and_untracked_files_not_ignored_ones_nor_its_own_state(tree: Path) -> None:
    store = CheckpointStore.for_repo(tree)
    cp = store.record(session_id="s", turn=1, tool="apply_patch", label="src/app.py")
    assert sorted(recorded_files(store, cp.tree)) == [".gitignore", "README.md", "crlf.txt", "src/app.py"]
    assert (tree / ".ctxagent" / "checkpoints" / "git" / "HEAD").is_file()
    assert store.checkpoints() == [cp] and cp.number == 1 and cp.session_id == "s" and cp.turn == 1


def test_changes_since_lists_created_modified_and_deleted_files(tree: Path) -> None:
    store = CheckpointStore.for_repo(tree)
    cp = store.record(session_id="s", turn=1, tool="command", label="make")
    (tree / "src" / "app.py").write_text("print('changed')\n")
    (tree / "README.md").unlink()
    (tree / "docs").mkdir()
    (tree / "docs" / "new.md").write_text("new\n")
    (tree / "build" / "ignored-new.o").write_text("x")
    assert store.changes_since(cp) == [FileChange("README.md", "deleted"), FileChange("docs/new.md", "created"),
                                       FileChange("src/app.py", "modified")]
    assert store.checkpoints()[0].after is not None  # the after-state is kept for /undo


def test_bytes_are_stored_as_they_are_whatever_attributes_or_user_config_say(tree: Path, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    hooks = home / "hooks"
    hooks.mkdir(parents=True)
    marker = tmp_path / "hook-ran"
    (hooks / "post-commit").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (hooks / "post-commit").chmod(0o755)
    (home / ".gitconfig").write_text(f"[core]\n\tautocrlf = true\n\thooksPath = {hooks}\n[commit]\n\tgpgsign = true\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))  # a caller's GIT_* must not redirect the store
    (tree / ".gitattributes").write_text("* text=auto eol=crlf\n*.txt filter=lfs\n")
    store = CheckpointStore.for_repo(tree)
    cp = store.record(session_id="s", turn=1, tool="t", label="x")
    [(mode, oid)] = store.entries(cp.tree, ["crlf.txt"]).values()
    assert store.blob(oid) == b"one\r\ntwo\r\n"
    assert not marker.exists() and not (tmp_path / "elsewhere").exists()


def _user_git_state(repo: Path) -> tuple:
    index = hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest()
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    return index, refs, (repo / ".git" / "HEAD").read_text(), git(repo, "stash", "list"), git(repo, "status", "--porcelain")


def test_the_users_git_is_never_touched(gitrepo: Path) -> None:
    before = _user_git_state(gitrepo)
    files_before = sorted(p.relative_to(gitrepo).as_posix() for p in (gitrepo / ".git").rglob("*"))
    store = CheckpointStore.for_repo(gitrepo)
    cp = store.record(session_id="s", turn=1, tool="t", label="x")
    (gitrepo / "src" / "app.py").write_text("changed\n")
    store.changes_since(cp)
    store.record(session_id="s", turn=2, tool="t", label="y")
    assert sorted(recorded_files(store, cp.tree)) == [".gitignore", "README.md", "crlf.txt", "src/app.py", "staged.txt"]
    (gitrepo / "src" / "app.py").write_text("print('hi')\n")
    assert _user_git_state(gitrepo) == before
    assert sorted(p.relative_to(gitrepo).as_posix() for p in (gitrepo / ".git").rglob("*")) == files_before


def test_files_over_the_size_limit_are_skipped_and_listed(tree: Path) -> None:
    store = CheckpointStore(tree, max_file_bytes=1000)
    (tree / "data.bin").write_bytes(b"x" * 5000)
    cp = store.record(session_id="s", turn=1, tool="t", label="x")
    assert cp.skipped == ("data.bin",) and "data.bin" not in recorded_files(store, cp.tree)
    (tree / "src" / "app.py").write_bytes(b"y" * 5000)  # a tracked file that grows over the limit
    (tree / "more.bin").write_bytes(b"z" * 5000)
    changes = store.changes_since(cp)
    assert FileChange("more.bin", "created") in changes and FileChange("src/app.py", "modified") in changes


def test_a_large_unrecorded_file_shrunk_or_deleted_is_reported_modified_or_deleted(tree: Path) -> None:
    store = CheckpointStore(tree, max_file_bytes=1000)
    (tree / "big.bin").write_bytes(b"x" * 5000)
    (tree / "huge.bin").write_bytes(b"x" * 5000)
    cp = store.record(session_id="s", turn=1, tool="t", label="x")
    (tree / "big.bin").write_bytes(b"a\n")  # `echo a > big.bin` is no creation
    (tree / "huge.bin").unlink()
    changes = store.changes_since(cp)
    assert FileChange("big.bin", "modified") in changes and FileChange("huge.bin", "deleted") in changes


def test_a_damaged_store_is_set_aside_and_a_new_one_started(tree: Path) -> None:
    store = CheckpointStore.for_repo(tree)
    store.record(session_id="s", turn=1, tool="t", label="x")
    head = tree / ".ctxagent" / "checkpoints" / "git" / "refs" / "ctxagent" / "head"
    head.write_text("0123456789abcdef0123456789abcdef01234567\n")  # names an object that does not exist
    fresh = CheckpointStore.for_repo(tree)
    cp = fresh.record(session_id="s", turn=2, tool="t", label="y")
    assert cp.notice and "set aside" in cp.notice and cp.number == 1
    [aside] = (tree / ".ctxagent").glob("checkpoints.damaged-*")
    assert (aside / "log.jsonl").is_file() and (aside / "git").is_dir()
    assert fresh.changes_since(cp) == []


def test_a_damaged_index_is_rebuilt(tree: Path) -> None:
    store = CheckpointStore.for_repo(tree)
    cp = store.record(session_id="s", turn=1, tool="t", label="x")
    (tree / ".ctxagent" / "checkpoints" / "git" / "index").write_bytes(b"DIRC garbage")
    (tree / "README.md").write_text("changed\n")
    assert CheckpointStore.for_repo(tree).changes_since(cp) == [FileChange("README.md", "modified")]


def test_a_write_failure_refuses_the_checkpoint_and_the_store_stays_usable(tree: Path) -> None:
    store = CheckpointStore.for_repo(tree)
    store.record(session_id="s", turn=1, tool="t", label="x")
    (tree / "big.bin").write_bytes(os.urandom(300_000))
    old = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, old[1]))  # like a full disk: writes fail
    try:
        with pytest.raises(CheckpointError, match="cannot record a checkpoint"):
            store.record(session_id="s", turn=2, tool="t", label="y")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old)
    assert [c.number for c in store.checkpoints()] == [1]
    assert store.record(session_id="s", turn=3, tool="t", label="z").number == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_store_refuses_the_checkpoint(tree: Path) -> None:
    store = CheckpointStore.for_repo(tree)
    store.record(session_id="s", turn=1, tool="t", label="x")
    (tree / "new.txt").write_text("new\n")
    objects = tree / ".ctxagent" / "checkpoints" / "git" / "objects"
    modes = {p: p.stat().st_mode for p in [objects, *objects.iterdir()]}
    for p in modes:
        p.chmod(0o555)
    try:
        with pytest.raises(CheckpointError):
            store.record(session_id="s", turn=2, tool="t", label="y")
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


def test_locks_a_killed_run_left_behind_do_not_block_the_next_checkpoint(tree: Path) -> None:
    store = CheckpointStore.for_repo(tree)
    store.record(session_id="s", turn=1, tool="t", label="x")
    git_dir = tree / ".ctxagent" / "checkpoints" / "git"
    (git_dir / "index.lock").write_bytes(b"half")
    (git_dir / "refs" / "ctxagent" / "head.lock").write_text("half")
    (tree / "README.md").write_text("changed\n")
    cp = CheckpointStore.for_repo(tree).record(session_id="s", turn=2, tool="t", label="y")
    assert cp.number == 2 and not (git_dir / "index.lock").exists()


CHILD = """
import sys
from pathlib import Path
from ctxagent.exec.checkpoints import CheckpointStore
print("ready", flush=True)
CheckpointStore.for_repo(Path(sys.argv[1])).record(session_id="k", turn=1, tool="t", label="killed")
"""


def test_sigkill_during_a_checkpoint_leaves_a_consistent_store(tmp_path: Path) -> None:
    repo = tmp_path / "big"
    for i in range(1500):
        (repo / f"d{i % 30}").mkdir(parents=True, exist_ok=True)
        (repo / f"d{i % 30}" / f"f{i}.py").write_text(f"value = {i}\n" * 50)
    for delay in (0.0, 0.02, 0.05, 0.15, 0.3, 0.6):  # the first ones land in `git init`
        kill_child_after(CHILD, repo, delay)
        (repo / "d0" / "f0.py").write_text(f"after {delay}\n")
        store = CheckpointStore.for_repo(repo)
        cp = store.record(session_id="s", turn=2, tool="t", label="after the kill")
        assert cp.notice is None, cp.notice
        assert "d0/f0.py" in recorded_files(store, cp.tree)
        store.git.run("fsck", "--connectivity-only", "--no-dangling")
        assert store.changes_since(cp) == []


def test_the_first_snapshot_keeps_links_and_the_executable_bit(tree: Path) -> None:
    (tree / "link").symlink_to("src/app.py")
    (tree / "tool.sh").write_text("#!/bin/sh\n")
    (tree / "tool.sh").chmod(0o755)
    store = CheckpointStore.for_repo(tree)
    cp = store.record(session_id="s", turn=1, tool="t", label="x")
    entries = store.entries(cp.tree, ["link", "tool.sh", "README.md"])
    assert {p: mode for p, (mode, _oid) in entries.items()} == {"link": "120000", "tool.sh": "100755", "README.md": "100644"}
    assert store.blob(entries["link"][1]) == b"src/app.py"
    (tree / "README.md").write_text("changed\n")
    assert store.changes_since(cp) == [FileChange("README.md", "modified")]  # the index knows the rest is unchanged
