"""TextFile: encoding, dominant line ending and final newline survive a round trip."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxagent.errors import PatchError
from ctxagent.patch.textfile import TextFile, decode_text, encode_text, is_binary


@pytest.mark.parametrize("data", [
    b"", b"a", b"a\n", b"a\r\nb\r\n", b"a\r\nb", b"\n", b"\r\n", b"\n\n", b"a\r", b"x\ry\n",
    b"\xef\xbb\xbf", b"\xef\xbb\xbfhi\r\n", b"caf\xe9\n", b"\xff\xfe\x80", "\u4e2d\u6587\n".encode(),
])
def test_round_trip_is_exact_for_consistent_files(data: bytes) -> None:
    assert encode_text(decode_text(data)) == data


def test_fields() -> None:
    assert decode_text(b"a\r\nb") == TextFile(["a", "b"], "utf-8", "\r\n", False)
    assert decode_text(b"\xef\xbb\xbfx\n") == TextFile(["x"], "utf-8-sig", "\n", True)
    assert decode_text(b"caf\xe9\n").encoding == "latin-1"
    assert decode_text(b"") == TextFile([], "utf-8", "\n", False)


def test_lone_carriage_return_is_content() -> None:
    assert decode_text(b"a\rb\n").lines == ["a\rb"]
    assert decode_text(b"end\r").lines == ["end\r"]


@pytest.mark.parametrize("data, newline", [
    (b"a\r\nb\r\nc\n", "\r\n"), (b"a\nb\nc\r\n", "\n"), (b"a\r\nb\n", "\r\n"), (b"a\nb\r\n", "\n"),
    (b"single", "\n"),
])
def test_dominant_line_ending_and_tie_goes_to_first_line(data: bytes, newline: str) -> None:
    assert decode_text(data).newline == newline


def test_mixed_endings_are_written_with_the_dominant_one() -> None:
    assert encode_text(decode_text(b"a\r\nb\nc\r\n")) == b"a\r\nb\r\nc\r\n"


def test_unencodable_character_in_latin1_file_is_a_clear_error() -> None:
    file = TextFile(["ok", "arrow \u2192"], "latin-1", "\n", True)
    with pytest.raises(PatchError, match="line 2 cannot be written"):
        encode_text(file, path="l1.txt")


def test_binary_detection() -> None:
    assert is_binary(b"a\x00b") and not is_binary(b"plain\n")


_line = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00"), max_size=12)


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(_line, max_size=8), crlf=st.booleans(), final=st.booleans(), bom=st.booleans())
def test_round_trip_property(lines: list[str], crlf: bool, final: bool, bom: bool) -> None:
    nl = "\r\n" if crlf else "\n"
    if lines and not final and lines[-1] == "":
        final = True  # "a\n" + no final newline is the same bytes as "a" + final newline
    text = nl.join(lines) + (nl if lines and final else "")
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    assert encode_text(decode_text(data)) == data
