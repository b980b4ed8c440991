"""terms(): the one tokenizer behind every ranking (context selection, notes, memory, fetch).

The pinned outputs below were taken from the regex-per-token implementation before it
was optimised; any change to them changes every ranking in ctxagent, so it must be a
deliberate one (update the pins and say so in the commit).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxagent.text import terms as terms_module
from ctxagent.text.terms import has_cjk, stem, terms

PINNED = {
    "The parser refreshed 3 bars and retried the stopped processes quickly; classes, bytes and settings were updated.":
        ["parser", "refresh", "3", "bar", "retry", "stop", "process", "quick", "class", "byt", "sett", "updat"],
    "def parse_cfg(path): return ContextBuilder(HTTPServer, load_settings2, __init__, self.config)  "
    "# v3.11.7 x86_64 getHTTPResponseCode":
        ["parse_cfg", "parse", "cfg", "path", "contextbuilder", "context", "builder", "httpserver", "http", "server",
         "load_settings2", "load", "sett", "2", "__init__", "config", "v3", "v", "3", "11.7", "x86_64", "x", "86", "64",
         "gethttpresponsecode", "get", "http", "response", "code"],
    "如何优化Pandas的内存占用？上下文预算、检索结果。":
        ["如", "何", "优", "化", "如何", "何优", "优化", "panda", "的", "内", "存", "占", "用", "的内", "内存", "存占",
         "占用", "上", "下", "文", "预", "算", "上下", "下文", "文预", "预算", "检", "索", "结", "果", "检索", "索结", "结果"],
    "キャッシュ 캐시 메모리 ｶﾀｶﾅ":
        ["キ", "ャ", "ッ", "シ", "ュ", "キャ", "ャッ", "ッシ", "シュ", "캐", "시", "캐시", "메", "모", "리", "메모", "모리"],
    "café naïve it's don't — emoji 🚀 ＡＢＣ tab\tnew\nline 1.2.3. 12abc _private __dunder__ x\u00a0y\u3000z":
        ["caf", "na", "ve", "s", "don", "t", "emoji", "tab", "new", "line", "1.2.3", "12", "abc", "_private",
         "__dunder__", "x", "y", "z"],
    "": [],
    "   ... --- !!! ": [],
    "parse_cfg reads ContextBuilder": ["parse_cfg", "parse", "cfg", "read", "contextbuilder", "context", "builder"],
}


@pytest.mark.parametrize("text", list(PINNED))
def test_terms_output_is_pinned(text: str) -> None:
    assert terms(text) == PINNED[text]


def test_terms_of_a_repeated_call_is_a_fresh_list() -> None:
    first = terms("parse_cfg reads config")
    first.append("mutated")
    assert terms("parse_cfg reads config") == ["parse_cfg", "parse", "cfg", "read", "config"]


def reference_terms(text: str) -> list[str]:
    """The definition: one regex pass over the whole text, each token expanded."""
    return [t for token in terms_module._TOKEN_RE.findall(text) for t in terms_module._token_terms(token)]


_ALPHABET = st.sampled_from(list("abcXYZ019_.'-/ \t\n,;:()\"`") + ["内", "存", "优化", "キャ", "캐", "é", "—", "🚀", "\u00a0",
                                                                     "\u3000", "Ａ", "\ud800", "ß", "²", "\x00", "\x7f"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_ALPHABET, max_size=60).map("".join))
def test_terms_equal_the_regex_definition_on_any_text(text: str) -> None:
    assert terms(text) == reference_terms(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_terms_equal_the_regex_definition_on_arbitrary_unicode(text: str) -> None:
    assert terms(text) == reference_terms(text)


def reference_word_terms(word: str) -> list[str]:
    """The definition of a word's terms: the whole (lowercased) if it has parts, then each
    part stemmed, stop words left out."""
    lower = word.lower()
    parts = [p.lower() for p in terms_module._SPLIT_RE.split(word) if p]
    if len(parts) > 1:
        return [lower, *(stem(p) for p in parts if p not in terms_module.STOP_WORDS)]
    return [] if lower in terms_module.STOP_WORDS else [stem(lower)]


@settings(max_examples=400, deadline=None)
@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,14}", fullmatch=True))
def test_word_terms_equal_their_definition(word: str) -> None:
    assert terms_module._word_terms(word) == reference_word_terms(word)


@pytest.mark.parametrize("word", ["the123", "If2", "a1", "parser123", "Retries42", "x86", "utf8", "ab_12", "HTTP2"])
def test_word_then_number_fast_path_equals_the_definition(word: str) -> None:
    assert terms_module._word_terms(word) == reference_word_terms(word)


def test_stem_and_has_cjk() -> None:
    assert [stem(w) for w in ("refreshed", "bars", "retries", "class", "stopped", "abc")] == [
        "refresh", "bar", "retry", "class", "stop", "abc"]
    assert has_cjk("Pandas内存") and not has_cjk("Pandas memory")
