"""`ctxagent.cli.safe_text`: the one place that makes outside text safe for a terminal (F8)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxagent.cli.safe_text import has_controls, markup, one_line, plain, safe_json, visible

#: Every class of character a terminal may obey, with what the user must see instead.
UNSAFE = [("\x1b", "\\x1b"), ("\x07", "\\x07"), ("\x08", "\\x08"), ("\x00", "\\0"), ("\x0b", "\\v"),
          ("\x0c", "\\f"), ("\x1f", "\\x1f"), ("\x7f", "\\x7f"), ("\x9b", "\\x9b"), ("\x9d", "\\x9d"),
          ("\u202e", "\\u202e"), ("\u2066", "\\u2066"), ("\u200f", "\\u200f"), ("\u2028", "\\u2028"),
          ("\r", "\\r")]
#: What a terminal may obey, written out independently of the module's own pattern:
#: C0 but \t \n \r, DEL, C1, ALM/LRM/RLM, line/paragraph separators, bidi embeddings/overrides/isolates.
TERMINAL_OBEYS = frozenset([*map(chr, range(0x00, 0x09)), "\x0b", "\x0c", *map(chr, range(0x0e, 0x20)),
                            *map(chr, range(0x7f, 0xa0)), "\u061c", "\u200e", "\u200f", "\u2028", "\u2029",
                            *map(chr, range(0x202a, 0x202f)), *map(chr, range(0x2066, 0x206a))])


def _raw_unsafe(text: str) -> list[str]:
    """Characters of `text` a terminal would obey (a CR not ending a CRLF line included)."""
    return [c for i, c in enumerate(text)
            if c in TERMINAL_OBEYS or (c == "\r" and text[i + 1:i + 2] != "\n")]


@pytest.mark.parametrize("char, shown", UNSAFE)
def test_control_chars_in_outside_text_are_visible(char: str, shown: str) -> None:
    text = f"+print('hi'){char}[2K+ok"
    assert visible(text) == f"+print('hi'){shown}[2K+ok"
    assert has_controls(text)


@pytest.mark.parametrize("text", ["plain", "tab\there", "two\nlines", "crlf\r\nline\r\n", "中文 ünïcode ✓ 👍🏽",
                                  "emoji zwj 👩\u200d💻", "literal \\x1b text"])
def test_printable_text_newlines_tabs_and_crlf_are_unchanged(text: str) -> None:
    assert visible(text) == text
    assert not has_controls(text)


@given(st.text())
def test_visible_never_leaves_a_character_the_terminal_obeys(text: str) -> None:
    assert _raw_unsafe(visible(text)) == []


def test_rich_markup_in_outside_text_is_shown_not_obeyed() -> None:
    from io import StringIO

    from rich.console import Console

    console = Console(file=StringIO(), width=200, force_terminal=False)
    evil = "[bold red]x[/] [link=https://evil.example]click[/link] \\[escaped] [/]"
    console.print(f"[green]ok[/] {markup(evil)}")
    console.print(plain(evil))
    out = console.file.getvalue().splitlines()
    assert out == [f"ok {evil}", evil]


def test_one_line_joins_a_multi_line_message() -> None:
    assert one_line("while parsing\n  in <unicode string>, line 1\n\x1b[2Jdone") == \
        "while parsing in <unicode string>, line 1 \\x1b[2Jdone"


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                    max_leaves=12))
def test_safe_json_decodes_to_the_same_value_with_nothing_the_terminal_obeys(value) -> None:
    text = safe_json(value)
    assert json.loads(text) == value
    assert _raw_unsafe(text) == []
