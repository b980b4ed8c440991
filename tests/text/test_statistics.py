"""Per-chunk text statistics: BM25 scores equal to query_scores over terms(), and token
lower bounds that never exceed the real count (exact or estimated)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxagent.text import statistics as textstats
from ctxagent.text.scoring import query_scores
from ctxagent.text.statistics import analyse, text_facts
from ctxagent.text.terms import chunks, evict_oldest, terms
from ctxagent.text.tokens import TokenCounter, estimate_value, exact_tokens, piece_floor

WORDS = ("parse_cfg config ContextBuilder budget 内存优化 Pandas tokens layer the of load_settings2 v3.11.7 "
         "it's café retried 如何优化Pandas的内存占用 x86_64 src/app.py").split()




def random_text(rng: random.Random) -> str:
    return rng.choice((" ", "\n", ", ")).join(rng.choice(WORDS) for _ in range(rng.randint(0, 40)))


@pytest.mark.parametrize("seed", range(4))
def test_scores_equal_query_scores_to_the_bit_on_first_and_later_sightings(seed: int) -> None:
    rng = random.Random(seed)
    texts = [random_text(rng) for _ in range(300)]
    texts += texts[:50]  # the same text twice in one corpus
    query = terms(random_text(rng)[:60])
    expected = query_scores(query, [terms(t) for t in texts], normalize=False)
    for _ in range(3):  # first sighting (figures and counts computed), then kept
        raw, facts = analyse(texts, query)
        assert raw == expected
        assert [f.length for f in facts] == [len(terms(t)) for t in texts]
    mixed = [random_text(rng) for _ in range(20)] + texts[:20]  # fresh and known texts together
    assert analyse(mixed, query)[0] == query_scores(query, [terms(t) for t in mixed], normalize=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=60), max_size=6), st.text(max_size=30))
def test_scores_and_lengths_match_terms_on_arbitrary_text(texts: list[str], query: str) -> None:
    q = terms(query)
    raw, facts = analyse(texts, q)
    assert raw == query_scores(q, [terms(t) for t in texts], normalize=False)
    assert [f.length for f in facts] == [len(terms(t)) for t in texts]
    assert all(f.value <= estimate_value(t) + 1e-9 for f, t in zip(facts, texts))


def test_caches_are_bounded(monkeypatch) -> None:
    monkeypatch.setattr(textstats, "TEXTS_MAX", 2)
    monkeypatch.setattr(textstats, "CHUNKS_MAX", 3)
    texts = ["one two three", "four five", "six seven eight", "one two three"]
    query = terms("two five")
    for _ in range(3):
        assert analyse(texts, query)[0] == query_scores(query, [terms(t) for t in texts], normalize=False)
    assert len(textstats._TEXTS) <= 2 and textstats.chunks_held() <= 3
    # the query's chunk table starts afresh once full: it never holds more than one call's chunks
    assert len(textstats._TABLE) <= len({c for t in texts for c in chunks(t)})


def test_switching_queries_gives_each_query_its_own_scores() -> None:
    rng = random.Random(7)
    texts = [random_text(rng) for _ in range(60)]
    queries = [terms(q) for q in ("parse_cfg budget", "内存优化 Pandas", "parse_cfg budget", "layer tokens café")]
    for query in queries * 2:  # alternate: the per-query table and the per-text entries must follow
        assert analyse(texts, query)[0] == query_scores(query, [terms(t) for t in texts], normalize=False)


def test_evict_oldest_keeps_the_newest_entries() -> None:
    cache = {i: str(i) for i in range(10)}
    evict_oldest(cache, 4)
    assert list(cache) == [6, 7, 8, 9]
    evict_oldest(cache, 0)
    assert cache == {}


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
    facts = text_facts(text)
    assert counter.floor(facts.pieces, facts.value) <= counter.count(text)


def test_floors_are_close_enough_to_decide_for_ordinary_text() -> None:
    text = "The parser reads config files and builds a context with budget tokens; parse_cfg returns None."
    facts = text_facts(text)
    exact = TokenCounter("gpt-4o").count(text)
    assert 0.6 * exact <= TokenCounter("gpt-4o").floor(facts.pieces, facts.value) <= exact
    estimate = TokenCounter(None)
    assert 0.6 * estimate.count(text) <= estimate.floor(facts.pieces, facts.value) <= estimate.count(text)
