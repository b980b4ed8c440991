"""seek_sequence: passes of increasing leniency; the first matching pass decides."""

from __future__ import annotations

from ctxagent.patch.seek import match_pass, seek_sequence


def test_exact_match_returns_every_candidate() -> None:
    lines = ["a", "x", "b", "x", "c"]
    assert seek_sequence(lines, ["x"], 0, False) == [1, 3]


def test_search_starts_at_start() -> None:
    assert seek_sequence(["x", "y", "x"], ["x"], 1, False) == [2]


def test_multi_line_pattern() -> None:
    lines = ["a", "b", "c", "a", "b", "d"]
    assert seek_sequence(lines, ["a", "b", "d"], 0, False) == [3]


def test_trailing_whitespace_pass() -> None:
    assert seek_sequence(["def f():  ", "  pass\t"], ["def f():", "  pass"], 0, False) == [0]
    assert match_pass(["x  "], ["x"], 0) == "ignoring trailing whitespace"


def test_surrounding_whitespace_pass() -> None:
    assert seek_sequence(["    return 1"], ["return 1"], 0, False) == [0]
    assert match_pass(["    return 1"], ["return 1"], 0) == "ignoring surrounding whitespace"


def test_typographic_punctuation_pass() -> None:
    line = "s = \u201chi\u201d \u2014 it\u2019s\u00a0ok \u2212 1"
    assert seek_sequence([line], ['s = "hi" - it\'s ok - 1'], 0, False) == [0]
    assert match_pass([line], ['s = "hi" - it\'s ok - 1'], 0) == "with typographic punctuation normalised"


def test_an_exact_match_is_not_outvoted_by_lenient_ones() -> None:
    # "x" exactly at 2; "x  " (trailing blanks) at 0 matches only in pass 2: no ambiguity.
    assert seek_sequence(["x  ", "y", "x"], ["x"], 0, False) == [2]


def test_ambiguity_is_counted_in_the_first_matching_pass_only() -> None:
    assert seek_sequence(["x  ", "x\t"], ["x"], 0, False) == [0, 1]


def test_eof_prefers_the_end() -> None:
    lines = ["end", "mid", "end"]
    assert seek_sequence(lines, ["end"], 0, True) == [2]


def test_eof_falls_back_to_whole_search() -> None:
    assert seek_sequence(["a", "b", "c"], ["a"], 0, True) == [0]


def test_empty_pattern() -> None:
    assert seek_sequence(["a", "b"], [], 1, False) == [1]
    assert seek_sequence(["a", "b"], [], 0, True) == [2]


def test_pattern_longer_than_file_or_no_match() -> None:
    assert seek_sequence(["a"], ["a", "b"], 0, False) == []
    assert seek_sequence(["a", "b"], ["z"], 0, False) == []
    assert match_pass(["a"], ["z"], 0) is None
