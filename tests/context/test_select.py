"""Select stage: scoring, layer budgets by query type, greedy fill with skip, dedup."""

from __future__ import annotations

import random
import zlib

import pytest

from ctxagent.context.budget import classify_query, layer_budgets
from ctxagent.context.packet import DEFAULT_SHARES, ContextConfig, ContextPacket
from ctxagent.context.select import SKETCH_K, Candidate, score, select, sketch
from ctxagent.text.scoring import BM25Index, query_scores
from ctxagent.text.terms import terms

NOW = 1_700_000_000.0




def cand(cid: str, text: str, cost: int, *, layer: str = "evidence", kind: str = "rag", rel: float | None = None,
         pinned: bool = False, order: int = 0, age_s: float = 0.0) -> Candidate:
    packet = ContextPacket(text, timestamp=NOW - age_s, relevance_score=rel, metadata={"type": kind})
    return Candidate(id=cid, layer=layer, type=kind, text=text, cost=cost, timestamp=NOW - age_s, packet=packet,
                     order=order, pinned=pinned)


def decisions(cands: list[Candidate]) -> dict[str, str]:
    return {c.id: c.decision for c in cands}


def test_query_scores_equal_bm25_index() -> None:
    random.seed(3)
    words = "parse_cfg config ContextBuilder budget 内存优化 Pandas tokens layer the of".split()
    docs = [terms(" ".join(random.choice(words) for _ in range(random.randint(0, 30)))) for _ in range(300)]
    query = terms("how does parse_cfg set the budget 内存")
    assert query_scores(query, docs) == pytest.approx(BM25Index(docs).scores(query))


def test_caller_relevance_is_respected_and_recency_decays() -> None:
    config = ContextConfig(half_life_s=100.0)
    cands = [cand("given", "unrelated words", 10, rel=0.9), cand("old", "parse_cfg reads config", 10, age_s=100.0)]
    score(cands, "parse_cfg", config, NOW)
    assert cands[0].relevance == 0.9 and cands[0].recency == 1.0
    assert cands[1].relevance == 1.0 and cands[1].recency == pytest.approx(0.5)
    assert cands[1].score == pytest.approx(0.7 * 1.0 + 0.3 * 0.5)


def test_greedy_fill_skips_what_does_not_fit_and_goes_on() -> None:
    config = ContextConfig(layer_shares={"evidence": 1.0, "memory": 0, "history": 0, "tool_results": 0})
    cands = [cand("big", "x", 500, rel=1.0), cand("small1", "y", 40, rel=0.8), cand("small2", "z", 40, rel=0.6)]
    score(cands, "q", config, NOW)
    select(cands, 100, config, "q")
    assert decisions(cands) == {"big": "dropped", "small1": "selected", "small2": "selected"}
    assert "needs 500 tokens" in cands[0].reason


def test_near_duplicates_are_dropped() -> None:
    text = "The release tag is v9-TEST and the build uses parse_config from config.py"
    cands = [cand("a", text, 20, rel=0.9), cand("b", text + " .", 20, rel=0.8), cand("c", "something else entirely here", 20, rel=0.7)]
    config = ContextConfig()
    score(cands, "release", config, NOW)
    select(cands, 1000, config, "release")
    assert decisions(cands) == {"a": "selected", "b": "dropped", "c": "selected"}
    assert "near-duplicate of a" in cands[1].reason


def test_min_relevance_spares_pinned_state_and_history() -> None:
    config = ContextConfig(min_relevance=0.5)
    cands = [
        cand("weak", "nothing in common", 10, rel=0.1),
        cand("pinned", "nothing in common", 10, rel=0.1, pinned=True),
        cand("state", "todo: nothing in common", 10, rel=0.1, kind="todo"),
        cand("hist", "an old message", 10, rel=0.1, layer="history", kind="history"),
    ]
    score(cands, "q", config, NOW)
    select(cands, 1000, config, "q")
    assert decisions(cands) == {"weak": "dropped", "pinned": "selected", "state": "selected", "hist": "selected"}
    assert "min_relevance" in cands[0].reason


def test_each_dropped_candidate_gets_the_reason_of_its_own_relevance() -> None:
    config = ContextConfig(min_relevance=0.5)
    cands = [cand(f"c{i}", "words", 10, order=i) for i in range(5)]
    for c, relevance in zip(cands, (0.0, 0.25, 0.0, -0.0, 0.25)):
        c.relevance = relevance  # set after score(): a caller's candidates may carry anything
    select(cands, 1000, config, "q")
    assert [c.reason for c in cands] == [f"relevance {r} below min_relevance 0.5"
                                         for r in ("0.00", "0.25", "0.00", "-0.00", "0.25")]


def test_unused_layer_budget_flows_to_other_layers() -> None:
    config = ContextConfig(adaptive_layers=False)
    # evidence alone would get 30/80 of 1000 tokens; memory and history are empty
    cands = [cand(f"e{i}", f"evidence item {i}", 100, rel=1.0 - i / 100) for i in range(9)]
    score(cands, "q", config, NOW)
    figures = select(cands, 1000, config, "q")
    assert figures["layers"]["evidence"]["budget"] < 400
    assert sum(c.decision == "selected" for c in cands) == 9
    assert any("left unused by other layers" in c.reason for c in cands)


@pytest.mark.parametrize(
    "query, kind",
    [
        ("Why does parse_cfg fail on empty files?", "code"), ("fix the bug in builder.py", "code"),
        ("这个函数为什么报错", "code"), ("What did I say earlier about the release tag?", "recall"),
        ("之前我们讨论过什么", "recall"), ("and the tests?", "code"), ("continue", "followup"), ("继续", "followup"),
        ("如何优化Pandas的内存占用?", "general"), ("Write a haiku about autumn", "general"), ("", "general"),
    ],
)
def test_classify_query(query: str, kind: str) -> None:
    assert classify_query(query) == kind


def test_code_queries_give_evidence_more_budget() -> None:
    general = layer_budgets(DEFAULT_SHARES, 10_000, "general")
    code = layer_budgets(DEFAULT_SHARES, 10_000, "code")
    recall = layer_budgets(DEFAULT_SHARES, 10_000, "recall")
    assert code["evidence"] > general["evidence"] and code["history"] < general["history"]
    assert recall["memory"] > general["memory"]
    assert sum(code.values()) <= 10_000
    assert layer_budgets(DEFAULT_SHARES, 10_000, "code", adaptive=False) == general


def test_history_layer_fills_newest_first() -> None:
    config = ContextConfig(layer_shares={"history": 1.0, "memory": 0, "evidence": 0, "tool_results": 0})
    cands = [cand(f"h{i}", f"message {i}", 30, layer="history", kind="history", order=i, rel=1.0 if i == 0 else 0.0)
             for i in range(5)]
    score(cands, "message 0", config, NOW)
    select(cands, 95, config, "message 0")
    assert [c.id for c in cands if c.decision == "selected"] == ["h2", "h3", "h4"]


def test_relevance_is_normalised_within_each_layer() -> None:
    config = ContextConfig()
    cands = [cand("code", "parse_cfg parse_cfg reads the config file parse_cfg", 10),
             cand("mem", "the user likes parse_cfg", 10, layer="memory", kind="memory"),
             cand("mem2", "the user likes tea", 10, layer="memory", kind="memory")]
    score(cands, "parse_cfg config file", config, NOW)
    assert cands[0].relevance == 1.0 and cands[1].relevance == 1.0 and cands[2].relevance == 0.0


@pytest.mark.parametrize("text", ["", "parse_cfg", "内存优化 and parse_cfg reads the config " * 5,
                                  "The release tag is v9-TEST and the build uses parse_config from config.py"])
def test_sketch_is_the_bottom_k_crc32_of_term_bigrams(text: str) -> None:
    doc = terms(text)
    pairs = [f"{a}\x00{b}" for a, b in zip(doc, doc[1:])] if len(doc) > 1 else doc
    shingles = {zlib.crc32(p.encode("utf-8")) for p in pairs}
    assert sketch(text) == frozenset(sorted(shingles)[:SKETCH_K])
