"""parse_patch: the envelope, operations, hunks and every leniency (cases P04a-c)."""

from __future__ import annotations

import pytest

from ctxagent.errors import PatchError
from ctxagent.patch import AddFile, Chunk, DeleteFile, UpdateFile, parse_patch


def P(body: str) -> str:
    return f"*** Begin Patch\n{body}*** End Patch\n"


def error(text: str) -> str:
    with pytest.raises(PatchError) as info:
        parse_patch(text)
    return str(info.value)


def test_all_operation_kinds_in_order() -> None:
    patch = parse_patch(P(
        "*** Add File: a.txt\n+one\n+two\n"
        "*** Delete File: b.txt\n"
        "*** Update File: c.py\n*** Move to: d.py\n@@ def f():\n x\n-y\n+Y\n"
    ))
    assert patch.ops == [
        AddFile("a.txt", ["one", "two"]),
        DeleteFile("b.txt"),
        UpdateFile("c.py", "d.py", [Chunk("def f():", ["x", "y"], ["x", "Y"], False)]),
    ]


def test_chunk_old_and_new_lines_keep_order_of_context() -> None:
    (op,) = parse_patch(P("*** Update File: f\n@@\n a\n-b\n+B\n c\n-d\n+D\n e\n")).ops
    assert op.chunks == [Chunk(None, ["a", "b", "c", "d", "e"], ["a", "B", "c", "D", "e"])]


def test_first_hunk_may_omit_its_header_and_later_hunks_split_on_at_at() -> None:
    (op,) = parse_patch(P("*** Update File: f\n-a\n+A\n@@ anchor\n-b\n+B\n")).ops
    assert [c.context_anchor for c in op.chunks] == [None, "anchor"]


def test_end_of_file_marker_sets_flag() -> None:
    (op,) = parse_patch(P("*** Update File: f\n@@\n x\n+y\n*** End of File\n")).ops
    assert op.chunks[0].end_of_file is True


def test_git_style_range_header_keeps_only_the_anchor_text() -> None:
    (op,) = parse_patch(P("*** Update File: f\n@@ -3,4 +3,5 @@ class A:\n-a\n+b\n@@ -9 +9 @@\n-c\n+d\n")).ops
    assert [c.context_anchor for c in op.chunks] == ["class A:", None]


def test_crlf_patch_parses_like_lf() -> None:
    text = P("*** Update File: f\n@@\n a\n-b\n+c\n*** Add File: g\n+x\n")
    assert parse_patch(text.replace("\n", "\r\n")) == parse_patch(text)


def test_empty_line_inside_hunk_is_empty_context_and_trailing_ones_dropped() -> None:
    (op,) = parse_patch(P("*** Update File: f\n@@\n a\n\n-b\n+c\n\n\n")).ops
    assert op.chunks[0].old_lines == ["a", "", "b"]


def test_no_newline_marker_from_git_is_ignored() -> None:
    (op,) = parse_patch(P("*** Update File: f\n@@\n-a\n\\ No newline at end of file\n+b\n")).ops
    assert op.chunks[0] == Chunk(None, ["a"], ["b"])


def test_context_line_that_looks_like_a_marker_is_content() -> None:
    (op,) = parse_patch(P("*** Update File: f\n@@\n *** End Patch\n-x\n+y\n")).ops
    assert op.chunks[0].old_lines == ["*** End Patch", "x"]


def test_add_file_lines_keep_plus_content_and_blank_lines_between() -> None:
    (op,) = parse_patch(P("*** Add File: a\n++x\n\n+ y\n\n")).ops
    assert op.lines == ["+x", "", " y"]


def test_add_file_without_lines_is_empty_file() -> None:
    assert parse_patch(P("*** Add File: empty.txt\n")).ops == [AddFile("empty.txt", [])]


def test_marker_lines_tolerate_surrounding_whitespace() -> None:
    assert parse_patch("  *** Begin Patch  \n*** Add File: a \n+x\n*** End Patch   \n").ops == [AddFile("a", ["x"])]


def test_pure_rename() -> None:
    assert parse_patch(P("*** Update File: a\n*** Move to: b\n")).ops == [UpdateFile("a", "b")]


def test_update_body_without_prefixes_is_full_replacement() -> None:
    (op,) = parse_patch(P("*** Update File: cfg.ini\n[a]\n  x = 1\n\n")).ops
    assert op.replace_lines == ["[a]", "  x = 1"] and op.chunks == []


def test_body_with_plus_or_minus_lines_is_never_a_replacement() -> None:
    message = error(P("*** Update File: f\n@@\n-a\n+b\nno prefix here\n"))
    assert "line 6" in message and "no prefix here" in message and "hunk 1 of f" in message


# --- P04: envelope noise ----------------------------------------------------------

@pytest.mark.parametrize("fence", ["```diff", "```patch", "```", "  ```diff  "])
def test_P04a_one_enclosing_fence_is_stripped(fence: str) -> None:
    text = fence + "\n" + P("*** Add File: s.txt\n+x\n") + "```\n"
    assert parse_patch(text).ops == [AddFile("s.txt", ["x"])]


def test_P04a_fence_without_closing_line_is_still_stripped() -> None:
    assert parse_patch("```diff\n" + P("*** Add File: s\n+x\n")).ops == [AddFile("s", ["x"])]


def test_P04a_second_fence_is_reported_not_generic() -> None:
    message = error("```diff\n```diff\n" + P("*** Add File: s\n+x\n") + "```\n```\n")
    assert "```diff" in message and "fence" in message


def test_P04b_stray_end_marker_before_begin_is_ignored() -> None:
    ops = parse_patch("*** End Patch\n" + P("*** Add File: sample.txt\n+s\n")).ops
    assert ops == [AddFile("sample.txt", ["s"])]


def test_P04c_no_operations_is_an_error() -> None:
    assert "no operation" in error("*** Begin Patch\n*** End Patch")
    assert "no operation" in error("*** Begin Patch\n\n\n*** End Patch\n")


def test_text_before_begin_is_quoted() -> None:
    message = error("Sure! Here it is:\n" + P("*** Add File: a\n+x\n"))
    assert "'Sure! Here it is:'" in message and "line 1" in message


def test_unified_diff_gets_a_hint() -> None:
    assert "unified diff" in error("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")


def test_no_begin_marker_at_all() -> None:
    assert "no '*** Begin Patch'" in error("\n\n")


def test_second_begin_marker_is_refused() -> None:
    assert "second '*** Begin Patch'" in error("*** Begin Patch\n" + P("*** Add File: a\n+x\n"))


def test_second_patch_after_end_is_refused_not_dropped() -> None:
    text = P("*** Add File: a\n+x\n") + P("*** Add File: b\n+y\n")
    assert "a second patch" in error(text)


def test_operation_after_end_marker_is_refused_not_dropped() -> None:
    assert "*** Delete File: b" in error(P("*** Add File: a\n+x\n") + "*** Delete File: b\n")


def test_missing_end_marker_says_truncated() -> None:
    assert "truncated" in error("*** Begin Patch\n*** Add File: a\n+x\n")


# --- operation and hunk errors -----------------------------------------------------

def test_unknown_header_lists_valid_headers() -> None:
    message = error(P("*** Modify File: a\n"))
    assert "*** Add File: <path>" in message and "*** Update File: <path>" in message


def test_add_line_without_plus_names_the_line() -> None:
    message = error(P("*** Add File: a\n+ok\nnot ok\n"))
    assert "line 4" in message and "must start with '+'" in message


def test_delete_with_body_is_refused() -> None:
    assert "takes no body" in error(P("*** Delete File: a\n-x\n"))


def test_update_without_hunks_is_refused() -> None:
    assert "has no hunks" in error(P("*** Update File: a\n"))


@pytest.mark.parametrize("body", ["@@\n a\n b\n", "@@\n@@\n-a\n+b\n"])
def test_hunk_that_changes_nothing_is_refused(body: str) -> None:
    with pytest.raises(PatchError) as info:
        parse_patch(P(f"*** Update File: f\n{body}"))
    assert info.value.path == "f" and info.value.hunk == 1


def test_lines_after_end_of_file_need_a_new_header() -> None:
    assert "after '*** End of File'" in error(P("*** Update File: f\n@@\n-a\n+b\n*** End of File\n-c\n+d\n"))


def test_file_headers_of_unified_diff_inside_update_are_refused() -> None:
    assert "file headers" in error(P("*** Update File: f\n--- a/f\n+++ b/f\n@@\n-a\n+b\n"))


def test_header_without_path_is_refused() -> None:
    assert "names no path" in error(P("*** Add File:   \n+x\n"))


def test_non_text_input_is_refused() -> None:
    with pytest.raises(PatchError):
        parse_patch(b"*** Begin Patch")  # type: ignore[arg-type]


def test_trailing_space_only_line_is_empty_context_not_dropped() -> None:
    (op,) = parse_patch(P("*** Update File: f\n@@\n+0\n \n")).ops
    assert op.chunks[0] == Chunk(None, [""], ["0", ""])
