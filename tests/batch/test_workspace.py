"""Working copies: at base_commit, new files in the diff, the source repository untouched."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ctxagent.batch.workspace import WorkingCopy, remove_leftovers
from ctxagent.errors import BatchError
from tests.batch.conftest import Batch, applied, git, make_repo


def test_a_clone_at_base_commit_leaves_the_source_alone(tmp_path: Path) -> None:
    batch = Batch(tmp_path)
    before = batch.state()
    alpha = batch.repos[0]
    copy = WorkingCopy(str(alpha), batch.alpha_first, parent=tmp_path / "work", name="t1")
    assert (copy.path / "a.txt").read_text() == "one\n"  # the first commit, not HEAD
    (copy.path / "a.txt").write_text("changed\n")
    (copy.path / "new.txt").write_text("new\n")
    diff = copy.diff()
    assert "+changed" in diff and "new file mode" in diff and "+new" in diff
    git(copy.path, "commit", "-qm", "in the copy")  # even a commit there stays there
    copy.remove()
    assert not (tmp_path / "work" / "t1").exists()
    assert batch.state() == before


def test_a_folder_outside_git_is_copied(tmp_path: Path) -> None:
    source = tmp_path / "plain"
    (source / ".ctxagent").mkdir(parents=True)
    (source / "f.txt").write_text("x\n")
    (source / ".ctxagent" / "state.json").write_text("{}")
    copy = WorkingCopy(str(source))
    try:
        assert copy.diff() == ""
        assert not (copy.path / ".ctxagent" / "state.json").exists()
        (copy.path / "f.txt").write_text("y\n")
        assert "+y" in copy.diff()
    finally:
        copy.remove()
    assert not (source / ".git").exists() and (source / "f.txt").read_text() == "x\n"


def test_bad_sources_are_clear_errors_and_leave_nothing(tmp_path: Path) -> None:
    batch = Batch(tmp_path)
    with pytest.raises(BatchError, match="does not exist"):
        WorkingCopy(str(tmp_path / "nowhere"), parent=tmp_path / "work", name="a")
    with pytest.raises(BatchError, match="base_commit .0{40}. is not a commit"):
        WorkingCopy(str(batch.repos[0]), "0" * 40, parent=tmp_path / "work", name="b")
    (tmp_path / "plain").mkdir()
    with pytest.raises(BatchError, match="not a git repository"):
        WorkingCopy(str(tmp_path / "plain"), "abc", parent=tmp_path / "work", name="c")
    assert not any((tmp_path / "work").rglob("*"))


def test_leftovers_of_a_dead_worker_are_removed(tmp_path: Path) -> None:
    batch = Batch(tmp_path)
    WorkingCopy(str(batch.repos[1]), parent=tmp_path / "work", name="t3")  # never removed: a killed worker's
    remove_leftovers(tmp_path / "work", "t3")
    assert not (tmp_path / "work" / "t3").exists()
    assert subprocess.run(["git", "worktree", "list"], cwd=batch.repos[1], capture_output=True,
                          text=True).stdout.count("\n") == 1


def test_the_users_git_config_cannot_change_the_patch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Colour, no prefixes, rename detection or an external diff tool in ~/.gitconfig would make
    a model_patch that `git apply` (SWE-bench's harness) refuses."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[color]\n\tui = always\n[diff]\n\tnoprefix = true\n\trenames = copies\n"
                                     "\texternal = false\n\tmnemonicPrefix = true\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    repo = make_repo(tmp_path / "r", {"old.txt": "a\nb\nc\nd\n", "keep.txt": "k\n"})
    copy = WorkingCopy(str(repo), parent=tmp_path / "work", name="cfg")
    try:
        (copy.path / "old.txt").rename(copy.path / "new.txt")  # a rename, as a delete and an add
        (copy.path / "keep.txt").write_text("K\n")
        diff = copy.diff()
    finally:
        copy.remove()
    assert "\x1b" not in diff and "diff --git a/keep.txt b/keep.txt" in diff and "rename from" not in diff
    check = applied(repo, "HEAD", diff, tmp_path / "check")
    assert (check / "new.txt").read_text() == "a\nb\nc\nd\n" and not (check / "old.txt").exists()
    assert (check / "keep.txt").read_text() == "K\n"


def test_what_setup_made_is_not_in_the_diff(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"f.txt": "x\n"})
    copy = WorkingCopy(str(repo), parent=tmp_path / "work", name="s")
    try:
        (copy.path / ".venv" / "bin").mkdir(parents=True)  # what a setup line leaves
        (copy.path / ".venv" / "bin" / "python").write_text("#!/bin/sh\n")
        (copy.path / "weird *[name]# ").write_text("setup\n")
        copy.settle()
        (copy.path / "f.txt").write_text("y\n")  # the agent's work
        (copy.path / "added.txt").write_text("z\n")
        diff = copy.diff()
    finally:
        copy.remove()
    assert ".venv" not in diff and "weird" not in diff
    assert "+y" in diff and "b/added.txt" in diff


def test_a_bare_repository_is_cloned_and_a_missing_commit_is_named(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"f.txt": "x\n"})
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(tmp_path / "r.git")], check=True)
    copy = WorkingCopy(str(tmp_path / "r.git"), parent=tmp_path / "work", name="bare")
    try:
        assert (copy.path / "f.txt").read_text() == "x\n" and not (copy.path / "objects").exists()
    finally:
        copy.remove()
    with pytest.raises(BatchError, match="base_commit 'deadbeef' is not a commit of that repository"):
        WorkingCopy(str(repo), "deadbeef", parent=tmp_path / "work", name="c")
    (tmp_path / "empty").mkdir()
    git(tmp_path / "empty", "init", "-q")
    with pytest.raises(BatchError, match="has no commit yet"):
        WorkingCopy(str(tmp_path / "empty"), parent=tmp_path / "work", name="e")


def test_submodules_are_checked_out_from_the_sources_own_checkout(tmp_path: Path) -> None:
    lib = make_repo(tmp_path / "lib", {"l.txt": "lib\n"})
    repo = make_repo(tmp_path / "r", {"f.txt": "x\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    git(repo, "commit", "-qm", "a submodule")
    shutil.rmtree(lib)  # its URL is gone: only the source's checkout of it is left
    before = [git(repo, "status", "--porcelain"), sorted(str(p) for p in repo.rglob("*"))]
    copy = WorkingCopy(str(repo), parent=tmp_path / "work", name="sub")
    try:
        assert (copy.path / "vendor" / "lib" / "l.txt").read_text() == "lib\n"
        (copy.path / "f.txt").write_text("y\n")
        assert "vendor" not in copy.diff()
    finally:
        copy.remove()
    assert [git(repo, "status", "--porcelain"), sorted(str(p) for p in repo.rglob("*"))] == before


def test_a_url_is_cloned_once_for_all_its_tasks(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"f.txt": "x\n"})
    first = git(repo, "rev-parse", "HEAD").strip()
    url = (tmp_path / "r").as_uri()  # file://...: a URL, cloned as one
    copies = [WorkingCopy(url, first, parent=tmp_path / "work", name=f"t{i}") for i in range(2)]
    try:
        [mirror] = (tmp_path / "work" / ".mirrors").glob("*.git")
        for copy in copies:
            assert (copy.path / "f.txt").read_text() == "x\n"
            assert git(copy.path, "config", "remote.origin.url").strip() == url
            assert str(mirror) in (copy.path / ".git" / "objects" / "info" / "alternates").read_text()
        (repo / "f.txt").write_text("later\n")
        git(repo, "commit", "-qam", "later")  # a commit the mirror has not seen
        later = WorkingCopy(url, git(repo, "rev-parse", "HEAD").strip(), parent=tmp_path / "work", name="t9")
        assert (later.path / "f.txt").read_text() == "later\n"
        later.remove()
    finally:
        for copy in copies:
            copy.remove()


def test_a_dirty_source_gives_a_clean_copy_and_stays_dirty(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"f.txt": "x\n", "g.txt": "g\n"})
    (repo / "f.txt").write_text("modified, not staged\n")
    (repo / "g.txt").write_text("staged\n")
    git(repo, "add", "g.txt")
    (repo / "new.txt").write_text("untracked\n")
    before = [git(repo, "status", "--porcelain"), git(repo, "diff"), git(repo, "diff", "--cached"),
              git(repo, "stash", "list")]
    copy = WorkingCopy(str(repo), parent=tmp_path / "work", name="dirty")
    try:
        assert (copy.path / "f.txt").read_text() == "x\n" and (copy.path / "g.txt").read_text() == "g\n"
        assert not (copy.path / "new.txt").exists() and copy.diff() == ""
    finally:
        copy.remove()
    assert [git(repo, "status", "--porcelain"), git(repo, "diff"), git(repo, "diff", "--cached"),
            git(repo, "stash", "list")] == before
    assert (repo / "new.txt").read_text() == "untracked\n"
