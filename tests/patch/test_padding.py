"""White space around markers and headers, and a `Move to:` naming the file's own path
(issue 15, item 21; the rules follow codex's parser, docs/patch.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.errors import PatchError
from ctxagent.patch import AddFile, Chunk, DeleteFile, UpdateFile, apply_patch_text, parse_patch


@pytest.mark.parametrize("begin,end", [("*** Begin Patch ", "*** End Patch"), ("  *** Begin Patch", " *** End Patch"),
                                       ("\t*** Begin Patch\t", "*** End Patch   "), ("*** Begin Patch", " *** End Patch ")])
def test_padded_markers_are_accepted(begin: str, end: str) -> None:
    patch = parse_patch(f"{begin}\n*** Add File: a.txt\n+one\n{end}\n")
    assert patch.ops == [AddFile("a.txt", ["one"])]


def test_padded_headers_are_accepted_after_every_kind_of_section() -> None:
    patch = parse_patch("*** Begin Patch\n  *** Update File: foo.txt \n@@\n-a\n+b\n"
                        "  *** Add File: new.txt\n+x\n\t*** Delete File: old.txt\n"
                        "   *** Update File: bar.txt\n  *** Move to: baz.txt  \n@@\n-c\n+d\n*** End Patch\n")
    assert patch.ops == [UpdateFile("foo.txt", None, [Chunk(None, ["a"], ["b"])]), AddFile("new.txt", ["x"]),
                         DeleteFile("old.txt"), UpdateFile("bar.txt", "baz.txt", [Chunk(None, ["c"], ["d"])])]


def test_one_space_then_a_header_inside_an_update_is_a_context_line() -> None:
    # the file's own line "*** Add File: x" (a patch that edits docs about patches)
    (op,) = parse_patch("*** Begin Patch\n*** Update File: doc.md\n@@\n *** Add File: x\n-old\n+new\n"
                        " *** End Patch\n*** End Patch\n").ops
    assert op.chunks == [Chunk(None, ["*** Add File: x", "old", "*** End Patch"], ["*** Add File: x", "new",
                                                                                  "*** End Patch"])]


def test_the_last_padded_end_marker_closes_when_no_unpadded_one_exists() -> None:
    (op,) = parse_patch("*** Begin Patch\n*** Update File: doc.md\n@@\n *** End Patch\n-old\n+new\n"
                        " *** End Patch\n").ops
    assert op.chunks == [Chunk(None, ["*** End Patch", "old"], ["*** End Patch", "new"])]


def test_padding_does_not_hide_text_after_the_end_marker() -> None:
    with pytest.raises(PatchError, match="after '\\*\\*\\* End Patch'"):
        parse_patch("*** Begin Patch \n*** Add File: a.txt\n+one\n*** End Patch\nstray words\n")


def test_move_to_the_files_own_path_is_a_plain_update(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("a\n", encoding="utf-8")
    result = apply_patch_text("*** Begin Patch\n*** Update File: notes.md\n*** Move to: ./notes.md\n@@\n-a\n+b\n"
                              "*** End Patch\n", tmp_path, backup=False)
    assert result.summary() == "M notes.md (+1 -1)"
    assert (tmp_path / "notes.md").read_text(encoding="utf-8") == "b\n"


def test_move_to_the_files_own_path_without_hunks_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "n.md").write_text("a\n", encoding="utf-8")
    result = apply_patch_text("*** Begin Patch\n*** Update File: sub/n.md\n*** Move to: sub/../sub/n.md\n"
                              "*** End Patch\n", tmp_path, backup=False)
    assert result.files() == []
    assert (tmp_path / "sub" / "n.md").read_text(encoding="utf-8") == "a\n"


def test_move_onto_another_existing_file_is_still_refused(tmp_path: Path) -> None:
    for name in ("a.md", "b.md"):
        (tmp_path / name).write_text(name, encoding="utf-8")
    with pytest.raises(PatchError, match="the destination already exists"):
        apply_patch_text("*** Begin Patch\n*** Update File: a.md\n*** Move to: b.md\n*** End Patch\n", tmp_path)
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "a.md"
