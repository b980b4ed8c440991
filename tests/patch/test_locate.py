"""Locating chunks: ambiguity (P03), anchors, end of file, final newline (P02), messages."""

from __future__ import annotations

import pytest

from ctxagent.errors import PatchError
from ctxagent.patch.locate import apply_chunks, locate_chunks
from ctxagent.patch.model import Chunk

CALC = ["def a():", "    return 0", "", "def b():", "    return 0"]


def err(lines, chunks) -> PatchError:
    with pytest.raises(PatchError) as info:
        apply_chunks(lines, True, chunks, "calc.py")
    return info.value


def test_P03_ambiguous_hunk_names_both_line_numbers() -> None:
    error = err(CALC, [Chunk(None, ["    return 0"], ["    return 1"])])
    assert "lines 2, 5" in str(error) and error.path == "calc.py" and error.hunk == 1
    assert "'def b():'" in str(error)  # the line before each place, usable as an anchor


def test_P03_anchor_selects_the_second_function() -> None:
    edit = apply_chunks(CALC, True, [Chunk("def b():", ["    return 0"], ["    return 1"])], "calc.py")
    assert edit.lines == CALC[:4] + ["    return 1"]


def test_P03_anchor_selects_the_nearest_following_match() -> None:
    edit = apply_chunks(CALC, True, [Chunk("def a():", ["    return 0"], ["    return 1"])], "calc.py")
    assert edit.lines[1] == "    return 1" and edit.lines[4] == "    return 0"


def test_ambiguous_anchor_leading_to_different_places_is_refused() -> None:
    lines = ["class A:", "  def f():", "    x", "class B:", "  def f():", "    x"]
    error = err(lines, [Chunk("def f():", ["    x"], ["    y"])])
    assert "lines 3, 6" in str(error)


def test_repeated_anchor_leading_to_one_place_is_fine() -> None:
    lines = ["def f():", "  pass", "def f():", "  target"]
    edit = apply_chunks(lines, True, [Chunk("def f():", ["  target"], ["  hit"])], "f.py")
    assert edit.lines[-1] == "  hit"


def test_anchor_line_may_repeat_as_first_context_line() -> None:
    chunk = Chunk("def b():", ["def b():", "    return 0"], ["def b():", "    return 2"])
    assert apply_chunks(CALC, True, [chunk], "calc.py").lines[-1] == "    return 2"


def test_missing_anchor_is_reported_with_nearest_line() -> None:
    message = str(err(CALC, [Chunk("def c():", ["    return 0"], ["    return 1"])]))
    assert "'@@ def c():' anchor line of hunk 1" in message and "| def a():" in message


def test_not_found_shows_expected_and_numbered_nearest_lines() -> None:
    message = str(err(CALC, [Chunk(None, ["def b():", "    return 9"], ["def b():", "    return 1"])]))
    assert "hunk 1 was not found in calc.py" in message
    assert "    return 9" in message
    assert "lines 4-5" in message and "4 | def b():" in message and "5 |     return 0" in message


def test_not_found_in_empty_file() -> None:
    assert "calc.py is empty" in str(err([], [Chunk(None, ["x"], ["y"])]))


def test_chunks_are_searched_in_order_after_each_other() -> None:
    lines = ["x", "a", "x", "b"]
    chunks = [Chunk(None, ["a"], ["A"]), Chunk(None, ["x"], ["X"])]  # second "x" only after "a"
    assert apply_chunks(lines, True, chunks, "f").lines == ["x", "A", "X", "b"]
    assert locate_chunks(lines, chunks, "f") == [1, 2]


def test_second_hunk_error_names_hunk_two() -> None:
    error = err(CALC, [Chunk("def a():", ["    return 0"], ["    return 1"]), Chunk(None, ["nope"], ["x"])])
    assert error.hunk == 2 and "hunk 2" in str(error)


def test_end_of_file_chunk_matches_at_the_end() -> None:
    lines = ["end", "mid", "end"]
    edit = apply_chunks(lines, True, [Chunk(None, ["end"], ["END"], end_of_file=True)], "f")
    assert edit.lines == ["end", "mid", "END"]


def test_plus_only_chunk_goes_after_anchor_or_at_end() -> None:
    assert apply_chunks(["a", "b"], True, [Chunk("a", [], ["new"])], "f").lines == ["a", "new", "b"]
    assert apply_chunks(["a", "b"], True, [Chunk(None, [], ["new"])], "f").lines == ["a", "b", "new"]
    assert apply_chunks([], False, [Chunk(None, [], ["new"])], "f").lines == ["new"]


def test_context_lines_keep_the_files_own_text() -> None:
    edit = apply_chunks(["  a = 1   ", "b"], True, [Chunk(None, ["a = 1", "b"], ["a = 1", "c"])], "f")
    assert edit.lines == ["  a = 1   ", "c"]


@pytest.mark.parametrize("chunk, final", [
    (Chunk(None, ["line1"], ["LINE1"]), False),                  # P02b: end untouched
    (Chunk(None, ["line3"], ["line3", "tail"]), True),           # P02a: appended after the end
    (Chunk(None, ["line3"], ["LINE3"]), True),                   # last line replaced
    (Chunk(None, ["line2", "line3"], ["line2"]), True),          # last line deleted
    (Chunk(None, ["line2"], ["line2", "mid"]), False),           # insertion before the end
    (Chunk(None, ["line2", "line3"], ["x", "line3"]), False),    # end kept as context
])
def test_P02_final_newline_rule(chunk: Chunk, final: bool) -> None:
    edit = apply_chunks(["line1", "line2", "line3"], False, [chunk], "f.txt")
    assert edit.final_newline is final


def test_counts() -> None:
    edit = apply_chunks(["a", "b", "c"], True, [Chunk(None, ["a", "b", "c"], ["a", "B", "B2", "c"])], "f")
    assert (edit.added, edit.removed) == (2, 1)


def test_hunks_out_of_order_get_a_specific_message() -> None:
    lines = ["a", "b", "c", "d"]
    error = err(lines, [Chunk(None, ["c"], ["C"]), Chunk(None, ["a"], ["A"])])
    assert error.hunk == 2 and "matches line 1" in str(error) and "file order" in str(error)
