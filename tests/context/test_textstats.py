"""Per-chunk text statistics: BM25 identical to query_scores, lengths equal to terms(),
and token lower bounds that never exceed the real count (exact or estimated)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxagent.context import textstats
from ctxagent.context.scoring import query_scores
from ctxagent.context.terms import chunks, terms
from ctxagent.context.textstats import Vocab
from ctxagent.context.tokens import TokenCounter, exact_tokens, piece_floor

WORDS = ("parse_cfg config ContextBuilder budget 内存优化 Pandas tokens layer the of load_settings2 v3.11.7 "
         "it's café retried 如何优化Pandas的内存占用 x86_64 src/app.py").split()


def random_text(rng: random.Random, n: int) -> str:
    return rng.choice((" ", "\n", ", ")).join(rng.choice(WORDS) for _ in range(n))


@pytest.mark.parametrize("seed", range(5))
def test_bm25_equals_query_scores_to_the_bit(seed: int) -> None:
    rng = random.Random(seed)
    docs = [random_text(rng, rng.randint(0, 40)) for _ in range(300)]
    query = random_text(rng, 6)
    vocab = Vocab()
    stats = [vocab.stats(d) for d in docs]
    assert vocab.bm25(terms(query), stats) == query_scores(terms(query), [terms(d) for d in docs], normalize=False)


def test_bm25_with_no_match_no_docs_and_repeated_query_terms() -> None:
    vocab = Vocab()
    stats = [vocab.stats("alpha beta"), vocab.stats("gamma")]
    assert vocab.bm25(terms("delta"), stats) == [0.0, 0.0]
    assert vocab.bm25(terms("alpha"), []) == []
    twice = terms("gamma gamma beta")
    assert vocab.bm25(twice, stats) == query_scores(twice, [terms("alpha beta"), terms("gamma")], normalize=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=60), min_size=1, max_size=6), st.text(max_size=30))
def test_stats_and_bm25_match_terms_on_arbitrary_text(docs: list[str], query: str) -> None:
    vocab = Vocab()
    stats = [vocab.stats(d) for d in docs]
    assert [s.length for s in stats] == [len(terms(d)) for d in docs]
    assert vocab.bm25(terms(query), stats) == query_scores(terms(query), [terms(d) for d in docs], normalize=False)


def test_stats_are_cached_per_text_and_vocabularies_start_afresh(monkeypatch) -> None:
    vocab = textstats.vocab()
    assert vocab.stats("parse_cfg reads config") is vocab.stats("parse_cfg reads config")
    monkeypatch.setattr(textstats, "VOCAB_MAX", len(vocab.terms))
    fresh = textstats.vocab()
    assert fresh is not vocab and fresh.terms == []
    assert fresh.stats("parse_cfg reads config").length == vocab.stats("parse_cfg reads config").length


_TRICKY = st.sampled_from(list("aZ09'_.-/ \t\n\r,;()\"`") + ["内存", "优化", "キャ", "캐시", "é", "e\u0301", "—", "🚀",
                                                            "\u00a0", "\u3000", "Ａ", "²", "٣", "五", "ǅ", "ʰ", "'s", "'LL",
                                                            "\x00", "    ", "1234567", "HTTPServer", "getX"])


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(max_size=120), st.lists(_TRICKY, max_size=50).map("".join)))
def test_piece_floor_never_exceeds_the_exact_count(encoding: str, text: str) -> None:
    floor = piece_floor(text)
    by_chunks = sum(piece_floor(c.decode("utf-8", "surrogatepass")) for c in chunks(text))
    assert by_chunks <= floor <= exact_tokens(text, encoding)


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(st.text(max_size=120), st.lists(_TRICKY, max_size=50).map("".join)),
       model=st.sampled_from(["gpt-4o", "gpt-4", None]), factor=st.sampled_from([1.0, 0.5, 0.77, 1.3, 2.0]))
def test_counter_floor_never_exceeds_the_count(text: str, model: str | None, factor: float) -> None:
    counter = TokenCounter(model)
    if not counter.exact:
        counter.factor = factor
    vocab = Vocab()
    stats = vocab.stats(text)
    assert counter.floor(stats.pieces, vocab.value(stats)) <= counter.count(text)


def test_floors_are_close_enough_to_decide_for_ordinary_text() -> None:
    text = "The parser reads config files and builds a context with budget tokens; parse_cfg returns None."
    vocab = Vocab()
    stats = vocab.stats(text)
    exact = TokenCounter("gpt-4o").count(text)
    assert 0.6 * exact <= TokenCounter("gpt-4o").floor(stats.pieces, vocab.value(stats)) <= exact
    estimate = TokenCounter(None)
    assert 0.6 * estimate.count(text) <= estimate.floor(stats.pieces, vocab.value(stats)) <= estimate.count(text)
