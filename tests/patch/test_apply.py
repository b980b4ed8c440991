"""plan_patch + apply_changes: all or nothing (P05), permission bits (P06), existence rules,
sequential operations, limits, backups, rollback. Path rules are in test_paths.py."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ctxagent.errors import PatchError
from ctxagent.patch import (
    FileChange,
    PatchLimits,
    apply_changes,
    apply_patch_text,
    parse_patch,
    plan_patch,
)
from tests.patch.conftest import envelope as P
from tests.patch.conftest import snapshot


def refused(text: str, ws: Path, **kw) -> str:
    before = snapshot(ws)
    with pytest.raises(PatchError) as info:
        apply_patch_text(text, ws, **kw)
    assert snapshot(ws) == before, "a refused patch must not change any file"
    return str(info.value)


# --- P05 all or nothing, P06 permission bits -----------------------------------------

def test_P05_second_hunk_failing_leaves_every_file(ws: Path) -> None:
    (ws / "a.txt").write_text("one\ntwo\n")
    (ws / "b.txt").write_text("three\nfour\n")
    text = P("*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n three\n-4\n+FOUR\n")
    message = refused(text, ws)
    assert "b.txt" in message and "hunk 1" in message


def test_P06_executable_bit_survives_update(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    apply_patch_text(P("*** Update File: run.sh\n@@\n-echo hi\n+echo bye\n"), ws)
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert script.read_text() == "#!/bin/sh\necho bye\n"


def test_P06_move_keeps_permission_bits(ws: Path) -> None:
    (ws / "a.sh").write_text("x\n")
    (ws / "a.sh").chmod(0o750)
    apply_patch_text(P("*** Update File: a.sh\n*** Move to: bin/b.sh\n@@\n-x\n+y\n"), ws)
    assert stat.S_IMODE((ws / "bin" / "b.sh").stat().st_mode) == 0o750
    assert not (ws / "a.sh").exists()


def test_added_file_gets_default_mode(ws: Path) -> None:
    apply_patch_text(P("*** Add File: n.txt\n+x\n"), ws)
    assert stat.S_IMODE((ws / "n.txt").stat().st_mode) == 0o644


# --- existence rules --------------------------------------------------------------------

def test_existence_errors(ws: Path) -> None:
    (ws / "here.txt").write_text("h\n")
    (ws / "other.txt").write_text("o\n")
    (ws / "dir").mkdir()
    assert "already exists" in refused(P("*** Add File: here.txt\n+x\n"), ws)
    assert "does not exist" in refused(P("*** Update File: nope.txt\n@@\n-a\n+b\n"), ws)
    assert "does not exist" in refused(P("*** Delete File: nope.txt\n"), ws)
    assert "already exists" in refused(P("*** Update File: here.txt\n*** Move to: other.txt\n"), ws)
    assert "not a regular file" in refused(P("*** Delete File: dir\n"), ws)
    assert "is a file" in refused(P("*** Add File: here.txt/inner.txt\n+x\n"), ws)


def test_binary_update_refused_but_rename_and_delete_allowed(ws: Path) -> None:
    (ws / "b.bin").write_bytes(b"\x00\x01")
    assert "binary" in refused(P("*** Update File: b.bin\n@@\n-x\n+y\n"), ws)
    apply_patch_text(P("*** Update File: b.bin\n*** Move to: c.bin\n"), ws)
    assert (ws / "c.bin").read_bytes() == b"\x00\x01"
    apply_patch_text(P("*** Delete File: c.bin\n"), ws)
    assert snapshot(ws, state=False) == {}


# --- sequential semantics ---------------------------------------------------------------

def test_operations_apply_in_order_on_the_same_file(ws: Path) -> None:
    (ws / "f.txt").write_text("a\nb\n")
    result = apply_patch_text(P(
        "*** Update File: f.txt\n@@\n-a\n+A\n"
        "*** Update File: f.txt\n@@\n A\n-b\n+B\n"
    ), ws)
    assert (ws / "f.txt").read_text() == "A\nB\n"
    assert result.files() == [{"path": "f.txt", "action": "update", "added": 2, "removed": 2}]


def test_delete_then_add_replaces_and_add_then_delete_is_nothing(ws: Path) -> None:
    (ws / "r.txt").write_text("old\n")
    apply_patch_text(P("*** Delete File: r.txt\n*** Add File: r.txt\n+new\n"), ws)
    assert (ws / "r.txt").read_text() == "new\n"
    result = apply_patch_text(P("*** Add File: tmp.txt\n+x\n*** Delete File: tmp.txt\n"), ws)
    assert result.changes == [] and not (ws / "tmp.txt").exists()
    assert "no file changed" in result.summary()


def test_move_summary_and_chained_moves(ws: Path) -> None:
    (ws / "a.txt").write_text("1\n2\n")
    result = apply_patch_text(P(
        "*** Update File: a.txt\n*** Move to: b.txt\n@@\n 1\n-2\n+two\n"
        "*** Update File: b.txt\n*** Move to: c.txt\n"
    ), ws)
    assert snapshot(ws, state=False) == {"c.txt": b"1\ntwo\n"}
    assert result.files() == [{"path": "c.txt", "action": "move", "added": 1, "removed": 1, "from": "a.txt"}]
    assert result.summary() == "R a.txt -> c.txt (+1 -1)"


# --- limits ----------------------------------------------------------------------------

def test_file_limit(ws: Path) -> None:
    text = P("".join(f"*** Add File: f{i}.txt\n+x\n" for i in range(4)))
    assert "4 files, more than the limit of 3" in refused(text, ws, max_files=3)
    apply_patch_text(text, ws, max_files=4)


def test_changed_lines_limit(ws: Path) -> None:
    text = P("*** Add File: big.txt\n" + "+x\n" * 11)
    assert "11 lines, more than the limit of 10" in refused(text, ws, max_changed_lines=10)


def test_deleting_a_big_file_does_not_count_against_the_line_limit(ws: Path) -> None:
    (ws / "big.txt").write_text("x\n" * 50)
    apply_patch_text(P("*** Delete File: big.txt\n"), ws, max_changed_lines=10)


# --- backups, rollback, staleness ----------------------------------------------------

def test_backups_hold_the_originals(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.txt").write_bytes(b"a\r\n")
    (ws / "gone.txt").write_text("bye\n")
    result = apply_patch_text(P(
        "*** Update File: src/a.txt\n@@\n-a\n+b\n*** Delete File: gone.txt\n*** Add File: new.txt\n+n\n"
    ), ws)
    backup = result.backup_dir
    assert backup.parent == ws / ".ctxagent" / "backups"
    assert snapshot(backup) == {"src/a.txt": b"a\r\n", "gone.txt": b"bye\n"}


def test_two_patches_in_the_same_second_get_separate_backups(ws: Path) -> None:
    (ws / "a.txt").write_text("0\n")
    dirs = {apply_patch_text(P(f"*** Update File: a.txt\n@@\n-{i}\n+{i + 1}\n"), ws).backup_dir for i in range(3)}
    assert len(dirs) == 3


def test_no_backup_when_disabled(ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    assert apply_patch_text(P("*** Update File: a.txt\n@@\n-a\n+b\n"), ws, backup=False).backup_dir is None
    # the journal and the writer lock live in .ctxagent (S5, S8); no backup and no journal is left
    assert not (ws / ".ctxagent" / "backups").exists() and not (ws / ".ctxagent" / "journal").exists()


def test_P05_failed_write_restores_files_already_written(ws: Path) -> None:
    (ws / "a.txt").write_text("old a\n")
    (ws / "a.txt").chmod(0o600)
    (ws / "blocker").mkdir()  # a folder where the second file should be written
    changes = [
        FileChange("a.txt", b"old a\n", b"new a\n", 0o644, 0o600, "update"),
        FileChange("deep/new/x.txt", None, b"x\n", 0o644, None, "add"),
        FileChange("blocker", None, b"y\n", 0o644, None, "add"),
    ]
    with pytest.raises(PatchError, match="every file was restored"):
        apply_changes(changes, ws, None)
    assert (ws / "a.txt").read_text() == "old a\n"
    assert stat.S_IMODE((ws / "a.txt").stat().st_mode) == 0o600
    assert not (ws / "deep").exists()
    assert (ws / "blocker").is_dir()


def test_file_changed_after_planning_is_not_overwritten(ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    changes = plan_patch(parse_patch(P("*** Update File: a.txt\n@@\n-a\n+b\n")), ws)
    (ws / "a.txt").write_text("edited by the user\n")
    with pytest.raises(PatchError, match="changed on disk"):
        apply_changes(changes, ws, ws / ".ctxagent" / "backups")
    assert (ws / "a.txt").read_text() == "edited by the user\n"


def test_plan_reads_only(ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    changes = plan_patch(parse_patch(P("*** Update File: a.txt\n@@\n-a\n+b\n*** Add File: n\n+x\n")), ws,
                         PatchLimits(max_files=5))
    assert [c.path for c in changes] == ["a.txt", "n"] and snapshot(ws) == {"a.txt": b"a\n"}


def test_workspace_must_exist(tmp_path: Path) -> None:
    with pytest.raises(PatchError, match="not an existing folder"):
        apply_patch_text(P("*** Add File: a\n+x\n"), tmp_path / "missing")


def test_non_latin1_text_into_latin1_file_is_refused(ws: Path) -> None:
    (ws / "l1.txt").write_bytes(b"caf\xe9\n")
    assert "cannot be written" in refused(P("*** Update File: l1.txt\n@@\n-caf\xe9\n+\u2192\n"), ws)


def test_umask_does_not_matter_for_kept_bits(ws: Path) -> None:
    old = os.umask(0o077)
    try:
        (ws / "a.txt").write_text("a\n")
        (ws / "a.txt").chmod(0o664)
        apply_patch_text(P("*** Update File: a.txt\n@@\n-a\n+b\n"), ws)
    finally:
        os.umask(old)
    assert stat.S_IMODE((ws / "a.txt").stat().st_mode) == 0o664


# --- the redaction marker never overwrites a secret --------------------------------------

def test_a_patch_that_writes_the_redaction_marker_over_a_secret_is_refused(ws: Path) -> None:
    """The model meets `[REDACTED]` where ctxagent hid a secret (a resumed history, notes): a
    line re-typed from there would replace the real value in the file."""
    (ws / "settings.py").write_text('DEBUG = False\nAWS_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"\n')
    text = P('*** Update File: settings.py\n@@\n-DEBUG = False\n-AWS_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"\n'
             '+DEBUG = True\n+AWS_SECRET_ACCESS_KEY = "[REDACTED]"\n')
    message = refused(text, ws)
    assert "settings.py" in message and "[REDACTED]" in message and "nothing was changed" in message
    assert "[REDACTED]" in refused(P('*** Add File: new.env\n+TOKEN=[REDACTED]\n'), ws)


def test_a_file_that_already_holds_the_marker_may_still_be_patched(ws: Path) -> None:
    (ws / "doc.md").write_text("Secrets show as [REDACTED].\nline two\n")
    apply_patch_text(P("*** Update File: doc.md\n@@\n Secrets show as [REDACTED].\n-line two\n+line 2\n"), ws)
    assert (ws / "doc.md").read_text() == "Secrets show as [REDACTED].\nline 2\n"
