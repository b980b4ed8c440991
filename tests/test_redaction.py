"""`redact` and `StreamRedactor`: a secret split across streamed pieces is still redacted
(F7, console output), and redaction is idempotent and never raises, whatever the text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxagent.redaction import MAX_HELD_CHARS, REDACTED, StreamRedactor, redact
from tests.test_secret_rules import FALSE_POSITIVES, PEM_BODY, S7_NEAR_MISSES, S7_SECRETS, SECRETS

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


# Pieces of every rule's syntax (names, separators, types, schemes, quotes, URLs, key
# blocks), so hypothesis builds the secrets, near-secrets and cuts the rules must agree on.
PIECES = st.sampled_from([
    "password", "DB_PASSWORD", "apiKey", "api_key", "API_KEY", "token", "tokens", "Authorization", "SORT_KEY", "key",
    "=", ": ", " = ", ":=", "=>", '"', "'", '\\"', "]", " ", "\n", "\\n", "str", " | ", "None", "Optional[str]",
    "Bearer ", "Basic ", "hunter2horse", "abc123def456", "new_password", "(", ",", "4096", "$VAR", "/run/x",
    "https://", "user", ":", "@host", "AKIAIOSFODNN7EXAMPLE", "eyJhbGciOiJIUzI1NiJ9", ".", "eyJzdWIiOiIxMjM0In0",
    "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", PEM_BODY[:70], "Proc-Type: 4,ENCRYPTED",
    "sk_live_abcdefghij1234", "glpat-", "密码", "。", "x" * 40,
    "define(", "'DB_PASSWORD'", ", ", "login", " deploy", "password ", "client-key-data", "DB_PASS", "bypass",
    "123456789:", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0", "?sv=1&sig=", "k3P%2Fq9xv7Zm2Lw8Yb1Nc4T%3D", "account "])


@given(st.lists(PIECES, max_size=25), st.lists(st.integers(min_value=0), max_size=20))
def test_every_rule_redacts_streamed_text_as_it_redacts_the_whole_text(pieces: list[str], cuts: list[int]) -> None:
    text = "".join(pieces)
    assert _stream(text, cuts) == redact(text, [KEY])


@pytest.mark.parametrize("text", [s[0] for s in SECRETS] + FALSE_POSITIVES)
def test_the_examples_stream_one_character_at_a_time_as_they_redact_whole(text: str) -> None:
    assert _stream(text, list(range(len(text)))) == redact(text, [KEY])


@given(st.one_of(st.text(max_size=300), st.lists(PIECES | st.text(max_size=8), max_size=30).map("".join)))
def test_redaction_is_idempotent_and_never_raises(text: str) -> None:
    once = redact(text)
    assert redact(once) == once
    assert redact({"k": [text], "password": text, "db_password": text}) == {
        "k": [once], "password": REDACTED, "db_password": redact({"db_password": text})["db_password"]}


@given(st.lists(PIECES | st.text(max_size=8), max_size=30).map("".join))
def test_a_json_document_stays_json_when_redacted(text: str) -> None:
    # tool-call arguments are JSON inside the transcript: a resumed session replays them
    document = json.dumps({"command": text, "patch": f"+{text}\n"})
    assert json.loads(redact(document)).keys() == {"command", "patch"}


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


@pytest.mark.parametrize("text", [s[0] for s in S7_SECRETS] + S7_NEAR_MISSES)
def test_s7_the_new_families_stream_one_character_at_a_time_as_they_redact_whole(text: str) -> None:
    assert _stream(text, list(range(len(text)))) == redact(text, [KEY])
