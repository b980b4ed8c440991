"""`StreamRedactor`: a secret split across streamed pieces is still redacted (F7, console output)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxagent.redaction import MAX_HELD_CHARS, REDACTED, StreamRedactor, redact

KEY = "sk-TESTSECRET0123456789abcdef"
WORDS = st.sampled_from(["the", "key", "is", KEY, f"({KEY})", f"'{KEY}'", "Bearer", "密钥", "。", "\n", " ", "  ",
                         "ok,", "x" * 30, "sk-", "TESTSECRET"])


def _stream(text: str, cuts: list[int]) -> str:
    redactor = StreamRedactor([KEY])
    bounds = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return "".join(redactor.feed(text[a:b]) for a, b in zip(bounds, bounds[1:])) + redactor.flush()


@given(st.lists(WORDS, max_size=30), st.lists(st.integers(min_value=0), max_size=20))
def test_a_secret_split_across_stream_pieces_is_redacted(words: list[str], cuts: list[int]) -> None:
    text = "".join(words)
    out = _stream(text, cuts)
    assert KEY not in out
    assert out == redact(text, [KEY])  # the same result as redacting the whole text at once


@given(st.text(alphabet=st.characters(blacklist_characters="sSbBA_-"), max_size=200),
       st.lists(st.integers(min_value=0), max_size=20))
def test_text_without_secrets_comes_through_unchanged(text: str, cuts: list[int]) -> None:
    assert _stream(text, cuts) == text


def test_text_in_other_scripts_and_whole_words_are_shown_at_once() -> None:
    redactor = StreamRedactor([KEY])
    assert redactor.feed("你好，世界") == "你好，世界"
    assert redactor.feed("hello wor") == "hello "
    assert redactor.feed("ld sk-TEST") == "world "
    assert redactor.feed("SECRET0123456789abcdef done") == f"{REDACTED} "
    assert redactor.flush() == "done" and redactor.flush() == ""


def test_a_long_run_without_spaces_is_not_held_forever() -> None:
    redactor = StreamRedactor([KEY])
    shown = "".join(redactor.feed("x" * 100) for _ in range(10))
    assert len(shown) >= 1000 - MAX_HELD_CHARS
