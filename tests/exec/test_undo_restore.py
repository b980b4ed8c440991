"""`ctxagent undo` / `ctxagent checkpoints` through the real CLI, after patches and after
direct changes (what a command does): the tree comes back exactly, hand edits are kept."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ctxagent.exec.checkpoints import CheckpointStore
from ctxagent.exec.restore import apply_restore, last_change, plan_restore
from ctxagent.tools.patch import ApplyPatchTool
from tests.support.cli import invoke

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need git")
PATCH = ("*** Begin Patch\n*** Update File: src/app.py\n@@\n-print('hi')\n+print('changed')\n"
         "*** Add File: docs/new/guide.md\n+# new\n*** Delete File: old.txt\n*** End Patch\n")


def tree_hashes(repo: Path) -> dict[str, str]:
    """path -> sha256 (+ the executable bit) of every file outside .git and .ctxagent."""
    out = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo)
        if rel.parts[0] in (".git", ".ctxagent") or not path.is_file():
            continue
        out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest() + ("x" if os.access(path, os.X_OK) else "")
    return out


def folders(repo: Path) -> list[str]:
    return sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_dir()
                  and p.relative_to(repo).parts[0] not in (".git", ".ctxagent"))


@pytest.fixture(params=["git", "plain"])
def repo(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    repo = tmp_path / "proj"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("print('hi')\n")
    (repo / "old.txt").write_text("to be deleted\n")
    (repo / "run.sh").write_text("#!/bin/sh\necho run\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    if request.param == "git":
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
        for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "init"]):
            subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return repo


def test_undo_after_a_patch_restores_the_tree_exactly(repo: Path) -> None:
    before, dirs = tree_hashes(repo), folders(repo)
    result = ApplyPatchTool(workspace=repo, session_id="s1").execute({"patch": PATCH})
    assert result.ok, result.content
    assert tree_hashes(repo) != before
    out = invoke(["undo", "--repo", str(repo)])
    assert out.exit_code == 0, out.output
    assert tree_hashes(repo) == before and folders(repo) == dirs
    for name in ("src/app.py", "docs/new/guide.md", "old.txt"):
        assert name in out.stdout
    again = invoke(["undo", "--repo", str(repo)])
    assert "nothing to undo" in again.stdout and tree_hashes(repo) == before


def test_undo_after_a_command_that_created_modified_and_deleted_files(repo: Path) -> None:
    before = tree_hashes(repo)
    store = CheckpointStore.for_repo(repo)
    cp = store.record(session_id="s1", turn=1, tool="command", label="./build.sh")
    (repo / "src" / "app.py").write_text("rewritten\n")  # what the command did
    (repo / "run.sh").chmod(0o644)
    (repo / "old.txt").unlink()
    (repo / "out").mkdir()
    (repo / "out" / "result.bin").write_bytes(os.urandom(2000))
    (repo / "crlf.txt").write_bytes(b"a\nb\n")
    changes = store.changes_since(cp)
    assert {(c.path, c.kind) for c in changes} == {("src/app.py", "modified"), ("run.sh", "modified"),
                                                   ("old.txt", "deleted"), ("out/result.bin", "created"),
                                                   ("crlf.txt", "modified")}
    out = invoke(["undo", "--repo", str(repo), "--session", "s1"])
    assert out.exit_code == 0, out.output
    assert tree_hashes(repo) == before and not (repo / "out").exists()


def test_a_file_edited_by_hand_after_the_change_is_not_clobbered(repo: Path) -> None:
    ApplyPatchTool(workspace=repo, session_id="s1").execute({"patch": PATCH})
    (repo / "src" / "app.py").write_text("my own edit\n")
    after_edit = tree_hashes(repo)
    out = invoke(["undo", "--repo", str(repo)], input="")  # a pipe: cannot ask
    assert out.exit_code == 1
    assert "edited by hand" in out.stdout and "src/app.py" in out.stdout and "--force" in out.stdout
    assert tree_hashes(repo) == after_edit  # nothing at all was changed
    forced = invoke(["undo", "--repo", str(repo), "--force"])
    assert forced.exit_code == 0, forced.output
    assert (repo / "src" / "app.py").read_text() == "print('hi')\n"


def test_a_library_restore_can_keep_the_edited_file_and_restore_the_rest(repo: Path) -> None:
    ApplyPatchTool(workspace=repo, session_id="s1").execute({"patch": PATCH})
    (repo / "src" / "app.py").write_text("my own edit\n")
    store = CheckpointStore.for_repo(repo)
    plan = plan_restore(store, last_change(store))
    assert [f.path for f in plan.edited] == ["src/app.py"]
    result = apply_restore(store, plan, overwrite_edited=False, session_id="s1", turn=2, tool="undo")
    assert [f.path for f in result.kept] == ["src/app.py"]
    assert (repo / "src" / "app.py").read_text() == "my own edit\n"
    assert (repo / "old.txt").exists() and not (repo / "docs").exists()


def test_two_undos_go_back_two_changes_and_restoring_the_undo_checkpoint_redoes(repo: Path) -> None:
    original = tree_hashes(repo)
    tool = ApplyPatchTool(workspace=repo, session_id="s1")
    tool.execute({"patch": PATCH})
    after_first = tree_hashes(repo)
    tool.checkpoints.turn = 2
    assert tool.execute({"patch": "*** Begin Patch\n*** Update File: src/app.py\n@@\n-print('changed')\n+print('twice')\n"
                                  "*** End Patch\n"}).ok
    assert invoke(["undo", "--repo", str(repo)]).exit_code == 0
    assert tree_hashes(repo) == after_first
    assert invoke(["undo", "--repo", str(repo)]).exit_code == 0
    assert tree_hashes(repo) == original
    listing = invoke(["checkpoints", "--repo", str(repo)])
    assert listing.exit_code == 0 and "undone" in listing.stdout and "apply_patch" in listing.stdout
    redo = invoke(["checkpoints", "--repo", str(repo), "--restore", "4"])  # checkpoint 4: before the second undo
    assert redo.exit_code == 0, redo.output
    assert tree_hashes(repo) == after_first


def test_checkpoints_restore_goes_back_over_several_changes(repo: Path) -> None:
    original = tree_hashes(repo)
    store = CheckpointStore.for_repo(repo)
    for turn in (1, 2, 3):
        cp = store.record(session_id="s1", turn=turn, tool="command", label=f"step {turn}")
        (repo / f"made{turn}.txt").write_text(str(turn))
        (repo / "src" / "app.py").write_text(f"turn {turn}\n")
        store.changes_since(cp)
    out = invoke(["checkpoints", "--repo", str(repo), "--restore", "1"])
    assert out.exit_code == 0, out.output
    assert tree_hashes(repo) == original
    data = invoke(["checkpoints", "--repo", str(repo), "--json"]).stdout
    assert '"undone": true' in data and '"kind": "created"' in data


def test_undo_falls_back_to_an_old_backups_folder(repo: Path) -> None:
    old = repo / ".ctxagent" / "backups" / "20250101-120000"
    (old / "src").mkdir(parents=True)
    (old / "src" / "app.py").write_text("from the old backup\n")
    out = invoke(["undo", "--repo", str(repo)])
    assert out.exit_code == 0 and "20250101-120000" in out.stdout and "src/app.py" in out.stdout
    assert (repo / "src" / "app.py").read_text() == "print('hi')\n"  # listed only
    refused = invoke(["undo", "--repo", str(repo), "--backup"], input="")
    assert refused.exit_code == 1 and (repo / "src" / "app.py").read_text() == "print('hi')\n"
    done = invoke(["undo", "--repo", str(repo), "--backup", "--force"])
    assert done.exit_code == 0 and (repo / "src" / "app.py").read_text() == "from the old backup\n"


def test_a_patch_is_refused_when_no_checkpoint_can_be_recorded(repo: Path) -> None:
    (repo / ".ctxagent").mkdir()
    (repo / ".ctxagent" / "checkpoints").write_text("a file where the store's folder should be")
    before = tree_hashes(repo)
    result = ApplyPatchTool(workspace=repo, session_id="s1").execute({"patch": PATCH})
    assert not result.ok and "refused" in result.content and "checkpoint" in result.content
    assert tree_hashes(repo) == before


def test_after_an_undo_and_its_redo_an_earlier_restore_reverts_the_redone_change_too(repo: Path) -> None:
    original = tree_hashes(repo)
    store = CheckpointStore.for_repo(repo)
    for turn in (1, 2):
        cp = store.record(session_id="s1", turn=turn, tool="command", label=f"step {turn}")
        (repo / f"made{turn}.txt").write_text(str(turn))
        store.changes_since(cp)
    redone = tree_hashes(repo)
    assert invoke(["undo", "--repo", str(repo)]).exit_code == 0  # checkpoint 3: before the undo
    assert invoke(["checkpoints", "--repo", str(repo), "--restore", "3"]).exit_code == 0  # the redo
    assert tree_hashes(repo) == redone
    out = invoke(["checkpoints", "--repo", str(repo), "--restore", "1"])
    assert out.exit_code == 0, out.output
    assert tree_hashes(repo) == original, "made2.txt, brought back by the redo, goes too"
