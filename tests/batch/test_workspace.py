"""Working copies: at base_commit, new files in the diff, the source repository untouched."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ctxagent.batch.workspace import WorkingCopy, remove_leftovers
from ctxagent.errors import BatchError
from tests.batch.conftest import Batch, git


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
    with pytest.raises(BatchError, match="cannot check out base_commit 0000.*git checkout failed"):
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
