"""Pruning checkpoints (`ctxagent checkpoints --prune`, `ctxagent.exec.checkpoint_prune`): the
oldest go, the kept ones restore exactly (hand edits still told apart), the store shrinks
and stays whole (`git fsck`), in-use sessions are kept, a dry run changes nothing, bad
input is refused, and a SIGKILL mid-prune leaves the old or the new store, both usable."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from ctxagent.exec.checkpoint_prune import prune_store, store_bytes
from ctxagent.exec.checkpoints import CheckpointStore
from ctxagent.exec.compact import LOOSE_LIMIT, loose_estimate
from ctxagent.exec.shadow_git import RUNNING
from tests.exec.kill import kill_child_after
from tests.exec.test_undo_restore import tree_hashes
from tests.support.cli import invoke

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need git")
DAY = 86_400.0


def make_history(repo: Path, changes: int, *, session=lambda i: "s-old", big: int = 200_000) -> list[dict]:
    """`changes` recorded changes (each rewrites one large file and adds one); the tree each
    checkpoint was taken on, oldest first."""
    (repo / "src").mkdir(parents=True, exist_ok=True)
    (repo / "src" / "app.py").write_text("print('hi')\n")
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    store = CheckpointStore.for_repo(repo)
    trees = []
    for i in range(changes):
        trees.append(tree_hashes(repo))
        cp = store.record(session_id=session(i), turn=i + 1, tool="command", label=f"change {i}")
        (repo / "data.bin").write_bytes(os.urandom(big))  # incompressible: each version costs space
        (repo / "src" / "app.py").write_text(f"print({i})\r\n")
        (repo / f"made{i}.txt").write_text(f"{i}\n")
        store.changes_since(cp)
    return trees


def age_log(repo: Path, days_by_number) -> None:
    """Make checkpoints look old: their `created` moved back (what months of use leave)."""
    log = repo / ".ctxagent" / "checkpoints" / "log.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    for rec in records:
        if rec.get("kind") == "checkpoint":
            rec["created"] -= days_by_number(rec["number"]) * DAY
    log.write_text("".join(json.dumps(r) + "\n" for r in records))


def listed(repo: Path) -> list[int]:
    out = invoke(["checkpoints", "--repo", str(repo), "--json", "--limit", "0"])
    assert out.exit_code == 0, out.output
    return [c["number"] for c in json.loads(out.stdout)]


def fsck(repo: Path) -> None:
    store = CheckpointStore.for_repo(repo)
    assert store.git.run("fsck", "--full", "--strict", "--no-dangling").decode().strip() == ""


def store_files(repo: Path) -> dict[str, bytes]:
    """Every file of the store but the pid of the last git run (bookkeeping, see shadow_git.RUNNING)."""
    root = repo / ".ctxagent" / "checkpoints"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != RUNNING}


def test_prune_keeps_the_newest_which_restore_exactly_and_the_store_shrinks(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    trees = make_history(repo, 8)
    age_log(repo, lambda n: 40 - n)
    before = {c.number: (c.tree, c.after) for c in CheckpointStore.for_repo(repo).checkpoints()}
    size = store_bytes(CheckpointStore.for_repo(repo))
    out = invoke(["checkpoints", "--repo", str(repo), "--prune", "--keep", "3"])
    assert out.exit_code == 0, out.output
    assert "removed checkpoint 1 " in out.stdout and "removed 5 checkpoint(s), kept 3" in out.stdout
    assert listed(repo) == [6, 7, 8]
    gone = invoke(["checkpoints", "--repo", str(repo), "--restore", "2"])
    assert gone.exit_code != 0 and "no checkpoint 2 (old checkpoints were pruned)" in gone.output
    store = CheckpointStore.for_repo(repo)
    assert {c.number: (c.tree, c.after) for c in store.checkpoints()} == {n: before[n] for n in (6, 7, 8)}
    assert store_bytes(store) < size - 3.5 * 200_000, "the 4 versions of data.bin only 1-5 held are gone"
    fsck(repo)
    final = tree_hashes(repo)
    assert invoke(["undo", "--repo", str(repo)]).exit_code == 0
    assert tree_hashes(repo) == trees[7], "undo: the last change's files back"
    for number, wanted in ((9, final), (6, trees[5]), (11, final)):  # 9, 11: a restore's own checkpoint (redo)
        out = invoke(["checkpoints", "--repo", str(repo), "--restore", str(number), "--force"])
        assert out.exit_code == 0, out.output
        assert tree_hashes(repo) == wanted, number
    cp = store.record(session_id="s-new", turn=1, tool="command", label="after the prune")
    assert cp.number == 13 and cp.notice is None
    fsck(repo)


def test_hand_edits_are_still_told_apart_after_a_prune(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    make_history(repo, 4)
    age_log(repo, lambda n: 10)
    assert invoke(["checkpoints", "--repo", str(repo), "--prune", "--keep", "1"]).exit_code == 0
    (repo / "made3.txt").write_text("my own edit\n")  # the kept change (4) wrote it; edited since
    out = invoke(["checkpoints", "--repo", str(repo), "--restore", "4"])  # stdin not a terminal
    assert out.exit_code == 1 and "made3.txt" in out.output
    assert (repo / "made3.txt").read_text() == "my own edit\n"


def test_prune_everything_old_and_numbers_are_not_reused(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    make_history(repo, 3, big=1000)
    age_log(repo, lambda n: 60)
    out = invoke(["checkpoints", "--repo", str(repo), "--prune", "--older-than", "30d", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert [c["number"] for c in data["removed"]] == [1, 2, 3] and data["kept"] == 0
    assert data["bytes_freed"] > 0 and listed(repo) == []
    fsck(repo)
    store = CheckpointStore.for_repo(repo)
    assert store.head() is None
    assert store.record(session_id="s", turn=1, tool="command", label="x").number == 4


def test_age_and_keep_together_and_nothing_to_prune_says_why(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    make_history(repo, 5, big=1000)
    age_log(repo, lambda n: {1: 90, 2: 60, 3: 45, 4: 20, 5: 10}[n])
    out = invoke(["checkpoints", "--repo", str(repo), "--prune", "--older-than", "30d", "--keep", "4"])
    assert out.exit_code == 0 and listed(repo) == [2, 3, 4, 5]
    out = invoke(["checkpoints", "--repo", str(repo), "--prune", "--older-than", "30d"])
    assert out.exit_code == 0 and listed(repo) == [4, 5]
    out = invoke(["checkpoints", "--repo", str(repo), "--prune", "--older-than", "30d"])
    assert out.exit_code == 0 and out.stdout.startswith("nothing to prune: 2 checkpoint(s)")


def test_checkpoints_of_a_session_in_use_and_all_later_ones_are_kept(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    make_history(repo, 5, session=lambda i: "busy" if i == 2 else "s-old", big=1000)
    age_log(repo, lambda n: 50)
    sessions = repo / ".ctxagent" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / "busy.jsonl").write_text("{}\n")  # written just now: in use
    out = invoke(["checkpoints", "--repo", str(repo), "--prune", "--keep", "0"])
    assert out.exit_code == 0, out.output
    assert listed(repo) == [3, 4, 5], "a kept checkpoint reverts every later change: none may go"
    assert "(checkpoint 3 is of session busy, used in the last hour; none after it goes)" in out.stdout


def test_recent_checkpoints_are_never_removed(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    make_history(repo, 2, big=1000)
    out = invoke(["checkpoints", "--repo", str(repo), "--prune", "--keep", "0", "--older-than", "0"])
    assert out.exit_code == 0 and listed(repo) == [1, 2]
    assert "nothing to prune: 2 checkpoint(s); checkpoint 1 is recorded in the last hour" in out.stdout


def test_a_dry_run_changes_nothing(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    make_history(repo, 4, big=1000)
    age_log(repo, lambda n: 40)
    files = store_files(repo)
    out = invoke(["checkpoints", "--repo", str(repo), "--prune", "--keep", "1", "--dry-run"])
    assert out.exit_code == 0, out.output
    assert "would remove checkpoint 1 " in out.stdout and "would remove 3 checkpoint(s), keep 1" in out.stdout
    assert "that would free about" in out.stdout
    assert store_files(repo) == files
    data = json.loads(invoke(["checkpoints", "--repo", str(repo), "--prune", "--keep", "1", "--dry-run",
                              "--json"]).stdout)
    assert data["dry_run"] and [c["number"] for c in data["removed"]] == [1, 2, 3]
    assert 2 * 1000 < data["bytes_freed"] < data["bytes_before"] and data["estimated"]  # 2 versions of data.bin only 1-3 held
    assert store_files(repo) == files


@pytest.mark.parametrize(("args", "said"), [
    (["--keep", "-1"], "-1 is not in the range"),
    (["--older-than", "xyz"], "cannot read the age 'xyz'"),
    ([], "say what to prune"),
])
def test_bad_input_gets_a_clear_error_and_changes_nothing(tmp_path: Path, args: list[str], said: str) -> None:
    repo = tmp_path / "proj"
    make_history(repo, 2, big=1000)
    age_log(repo, lambda n: 40)
    files = store_files(repo)
    out = invoke(["checkpoints", "--repo", str(repo), "--prune", *args])
    assert out.exit_code == 2 and said in out.output, out.output
    assert store_files(repo) == files


def test_prune_options_without_prune_are_refused(tmp_path: Path) -> None:
    out = invoke(["checkpoints", "--repo", str(tmp_path), "--keep", "3"])
    assert out.exit_code == 2 and "go with --prune" in out.output
    out = invoke(["checkpoints", "--repo", str(tmp_path), "--prune", "--keep", "3", "--session", "x"])
    assert out.exit_code == 2 and "--session" in out.output


def test_loose_objects_are_repacked_once_they_pile_up(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    make_history(repo, 1, big=10)
    store = CheckpointStore.for_repo(repo)
    for i in range(LOOSE_LIMIT * 5 // 2):
        (repo / f"many{i // 500}").mkdir(exist_ok=True)
        (repo / f"many{i // 500}" / f"f{i}.txt").write_text(f"{i}\n")
    cp = store.record(session_id="s", turn=2, tool="command", label="many files")
    assert loose_estimate(store.git) > LOOSE_LIMIT, "the snapshot left them loose"
    (repo / "src" / "app.py").write_text("again\n")
    store.changes_since(cp)
    assert loose_estimate(store.git) < LOOSE_LIMIT // 4
    fsck(repo)


CHILD = """
import sys
from pathlib import Path
from ctxagent.exec.checkpoint_prune import prune_store
from ctxagent.exec.checkpoints import CheckpointStore
print("ready", flush=True)
prune_store(CheckpointStore.for_repo(Path(sys.argv[1])), keep=2, recent_s=0)
"""


def test_sigkill_during_a_prune_leaves_the_old_or_the_new_store(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    for i in range(600):
        (repo / f"d{i % 20}").mkdir(parents=True, exist_ok=True)
        (repo / f"d{i % 20}" / f"f{i}.py").write_text(f"value = {i}\n" * 40)
    make_history(repo, 12, big=20_000)
    store_dir = repo / ".ctxagent" / "checkpoints"
    pristine = tmp_path / "pristine"
    shutil.copytree(store_dir, pristine, symlinks=True)
    old = {c.number: (c.tree, c.after) for c in CheckpointStore.for_repo(repo).checkpoints()}
    seen: set[int] = set()
    for delay in (0.0, 0.03, 0.06, 0.1, 0.15, 0.25, 0.4, 0.7, 2.0):
        shutil.rmtree(store_dir)
        shutil.copytree(pristine, store_dir, symlinks=True)
        kill_child_after(CHILD, repo, delay)
        store = CheckpointStore.for_repo(repo)
        now = {c.number: (c.tree, c.after) for c in store.checkpoints()}
        assert now in (old, {n: old[n] for n in (11, 12)}), sorted(now)
        seen.add(len(now))
        for tree, after in now.values():
            store.git.run("cat-file", "-e", f"{tree}^{{tree}}")
            store.git.run("cat-file", "-e", f"{after}^{{tree}}")
        (repo / "d0" / "f0.py").write_text(f"after {delay}\n")
        cp = store.record(session_id="s", turn=99, tool="command", label="after the kill")
        assert cp.notice is None and cp.number == 13, cp.notice
        store.git.run("fsck", "--connectivity-only", "--no-dangling")
        store.changes_since(cp)
        prune_store(store, keep=3, recent_s=0)  # the next prune finishes the job
        assert [c.number for c in store.checkpoints()] == [11, 12, 13]
        fsck(repo)
    assert 12 in seen, "the first kills land before the new log is in place"


OLD, NEW = "20250101-000000-aaaa", "20250301-000000-bbbb"


def sessions_with_checkpoints(tmp_path: Path) -> Path:
    """Checkpoints 1-3 of session OLD (last used 60 days ago), 4 of `ctxagent apply` ("cli",
    no session) before that, 5-6 of session NEW (used 5 days ago)."""
    repo = tmp_path / "proj"
    owners = [OLD, OLD, OLD, "cli", NEW, NEW]
    make_history(repo, 6, session=lambda i: owners[i], big=5000)
    age_log(repo, lambda n: {1: 62, 2: 61, 3: 60.5, 4: 60.3, 5: 5.5, 6: 5.2}[n])
    for sid, days in ((OLD, 60.1), (NEW, 5)):
        path = repo / ".ctxagent" / "sessions" / f"{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")
        os.utime(path, (time.time() - days * DAY,) * 2)
    return repo


def test_sessions_prune_removes_the_removed_sessions_checkpoints(tmp_path: Path) -> None:
    repo = sessions_with_checkpoints(tmp_path)
    files = store_files(repo)
    out = invoke(["sessions", "prune", "--repo", str(repo), "--older-than", "30d", "--dry-run"])
    assert out.exit_code == 0 and "would remove 4 checkpoint(s), keep 2" in out.stdout, out.output
    assert f"(checkpoint 5 is of session {NEW}, not removed; none after it goes)" in out.stdout
    assert store_files(repo) == files and listed(repo) == [1, 2, 3, 4, 5, 6]
    out = invoke(["sessions", "prune", "--repo", str(repo), "--older-than", "30d", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert [r["id"] for r in data["removed"]] == [OLD]
    assert [c["number"] for c in data["checkpoints"]["removed"]] == [1, 2, 3, 4]
    assert listed(repo) == [5, 6]
    fsck(repo)


def test_the_retention_setting_prunes_the_removed_sessions_checkpoints(tmp_path: Path) -> None:
    from ctxagent.agent.retention import retention_notice
    from ctxagent.config.state_settings import StateSettings

    repo = sessions_with_checkpoints(tmp_path)
    said = retention_notice(repo, StateSettings(prune_older_than_days=30, prune_keep=0))
    assert said.startswith("removed 1 session(s) unused for over 30 days and 4 old checkpoint(s)"), said
    assert listed(repo) == [5, 6]


@pytest.mark.parametrize(("limit", "said", "left"), [  # like a full disk: in fast-import, or in the repack
    (600, "nothing was removed", [1, 2, 3, 4, 5, 6]), (100_000, "stopped half-way", [5, 6])])
def test_a_write_failure_mid_prune_leaves_a_usable_store_and_a_rerun_finishes(tmp_path: Path, limit: int, said: str,
                                                                            left: list[int]) -> None:
    import resource

    from ctxagent.exec.checkpoints import CheckpointError

    repo = tmp_path / "proj"
    trees = make_history(repo, 6, big=150_000)
    store = CheckpointStore.for_repo(repo)
    old = {c.number: (c.tree, c.after) for c in store.checkpoints()}
    was = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, was[1]))
    try:
        with pytest.raises(CheckpointError, match=said):
            prune_store(store, keep=2, recent_s=0)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, was)
    now = {c.number: (c.tree, c.after) for c in store.checkpoints()}
    assert now == {n: old[n] for n in left}
    out = invoke(["checkpoints", "--repo", str(repo), "--restore", "5", "--force"])
    assert out.exit_code == 0 and tree_hashes(repo) == trees[4], out.output
    prune_store(store, keep=3, recent_s=0)
    assert [c.number for c in store.checkpoints()] == [5, 6, 7]
    fsck(repo)
