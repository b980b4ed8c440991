"""Symbolic and hard links under moves, adds and updates (issue 17, S16): a patch never
deletes or creates a file through a link's name; it edits the file a link points to only
in place (Update File without Move to), and it replaces a hard-linked file's name only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxagent.errors import PatchError
from ctxagent.patch import apply_patch_text
from tests.patch.conftest import envelope as P
from tests.patch.conftest import snapshot


def _refused(text: str, ws: Path) -> str:
    before = snapshot(ws)
    links = {p: os.readlink(p) for p in ws.rglob("*") if p.is_symlink()}
    with pytest.raises(PatchError) as info:
        apply_patch_text(text, ws)
    assert snapshot(ws) == before, "a refused patch must not change any file"
    assert {p: os.readlink(p) for p in ws.rglob("*") if p.is_symlink()} == links
    return str(info.value)


@pytest.fixture
def linked(ws: Path) -> Path:
    """real.txt, link.txt -> real.txt, realdir/a.txt, linkdir -> realdir."""
    (ws / "real.txt").write_text("a\n")
    (ws / "link.txt").symlink_to("real.txt")
    (ws / "realdir").mkdir()
    (ws / "realdir" / "a.txt").write_text("x\n")
    (ws / "linkdir").symlink_to("realdir")
    return ws


def test_s16_update_link_with_move_to_is_refused_and_the_target_kept(linked: Path) -> None:
    message = _refused(P("*** Update File: link.txt\n*** Move to: moved.txt\n@@\n-a\n+b\n"), linked)
    assert "symbolic link" in message and "Move to" in message
    assert (linked / "real.txt").read_text() == "a\n" and not (linked / "moved.txt").exists()


def test_s16_a_pure_rename_of_a_link_is_refused_too(linked: Path) -> None:
    assert "symbolic link" in _refused(P("*** Update File: link.txt\n*** Move to: moved.txt\n"), linked)


def test_s16_a_move_onto_a_symlink_is_refused(linked: Path) -> None:
    (linked / "dangling").symlink_to("nowhere.txt")  # a destination that "does not exist"
    message = _refused(P("*** Update File: realdir/a.txt\n*** Move to: dangling\n"), linked)
    assert "dangling: it is a symbolic link" in message
    assert not (linked / "nowhere.txt").exists()


def test_s16_a_move_into_a_symlinked_folder_is_refused(linked: Path) -> None:
    message = _refused(P("*** Update File: real.txt\n*** Move to: linkdir/b.txt\n"), linked)
    assert "lies under linkdir, which is a symbolic link" in message


def test_s16_add_file_onto_a_symlink_is_refused(linked: Path) -> None:
    (linked / "dangling").symlink_to("made-through-link.txt")
    assert "dangling: it is a symbolic link" in _refused(P("*** Add File: dangling\n+x\n"), linked)
    assert not (linked / "made-through-link.txt").exists()
    assert "already exists" in _refused(P("*** Add File: link.txt\n+x\n"), linked)


def test_s16_add_file_under_a_symlinked_folder_is_refused(linked: Path) -> None:
    assert "lies under linkdir" in _refused(P("*** Add File: linkdir/new.txt\n+x\n"), linked)


def test_s16_delete_of_a_link_stays_refused(linked: Path) -> None:
    assert "symbolic link" in _refused(P("*** Delete File: link.txt\n"), linked)


def test_s16_update_through_a_symlinked_folder_edits_the_real_file_in_place(linked: Path) -> None:
    result = apply_patch_text(P("*** Update File: linkdir/a.txt\n@@\n-x\n+y\n"), linked)
    assert (linked / "realdir" / "a.txt").read_text() == "y\n"
    assert (linked / "linkdir").is_symlink() and os.readlink(linked / "linkdir") == "realdir"
    assert result.files()[0]["path"] == "realdir/a.txt"  # the diff and summary name the real file


def test_s16_update_of_a_link_edits_its_target_and_keeps_the_link(linked: Path) -> None:
    apply_patch_text(P("*** Update File: link.txt\n@@\n-a\n+b\n"), linked)
    assert (linked / "real.txt").read_text() == "b\n" and os.readlink(linked / "link.txt") == "real.txt"


def test_s16_a_hard_linked_file_gets_a_new_inode_and_the_other_name_keeps_its_content(ws: Path) -> None:
    (ws / "a.txt").write_text("one\n")
    os.link(ws / "a.txt", ws / "b.txt")
    assert (ws / "a.txt").stat().st_nlink == 2
    apply_patch_text(P("*** Update File: a.txt\n@@\n-one\n+two\n"), ws)
    assert (ws / "a.txt").read_text() == "two\n" and (ws / "b.txt").read_text() == "one\n"
    assert (ws / "a.txt").stat().st_nlink == 1 and (ws / "b.txt").stat().st_nlink == 1
    apply_patch_text(P("*** Delete File: b.txt\n"), ws)
    assert (ws / "a.txt").read_text() == "two\n"
