"""Relevance (BM25) and recency (exponential decay) scores.

BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework", 2009) with the
usual k1 = 1.5 and b = 0.75, over the terms of `ctxagent.text.terms`. Scores are
normalised to [0, 1] per query by dividing by the best score, so they combine with
recency in `score = w_rel * relevance + w_rec * recency` (docs/context.md, "How selection works").
The index is an inverted index, so scoring touches only documents that share a term
with the query: cost grows with matches, not with the corpus.
"""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from typing import Iterable, Mapping, NamedTuple, Sequence

from ctxagent.text.terms import terms

K1 = 1.5
B = 0.75


class BM25Index:
    """An in-memory BM25 index over a list of documents (strings or pre-split terms).

    `docs`: the texts; document i is addressed by its position i.
    `raw_scores(query) -> dict[int, float]` gives unnormalised scores of matching docs;
    `scores(query) -> list[float]` gives one score in [0, 1] per document.
    """

    def __init__(self, docs: Iterable[str | Sequence[str]], *, k1: float = K1, b: float = B) -> None:
        self.k1 = k1
        self.b = b
        self.doc_len: list[int] = []
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, doc in enumerate(docs):
            doc_terms = terms(doc) if isinstance(doc, str) else list(doc)
            self.doc_len.append(len(doc_terms))
            for term, count in Counter(doc_terms).items():
                self.postings[term].append((i, count))
        self.n_docs = len(self.doc_len)
        self.avg_len = (sum(self.doc_len) / self.n_docs) if self.n_docs else 0.0

    def idf(self, term: str) -> float:
        """Inverse document frequency with the +1 floor that keeps it positive."""
        df = len(self.postings.get(term, ()))
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))

    def raw_scores(self, query: str | Sequence[str]) -> dict[int, float]:
        """Unnormalised BM25 score of every document sharing a term with `query`."""
        q_terms = terms(query) if isinstance(query, str) else list(query)
        out: dict[int, float] = defaultdict(float)
        avg = self.avg_len or 1.0
        for term, q_count in Counter(q_terms).items():
            plist = self.postings.get(term)
            if not plist:
                continue
            idf = self.idf(term)
            for doc, tf in plist:
                norm = tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * self.doc_len[doc] / avg))
                out[doc] += idf * norm * (1 + math.log(q_count))
        return out

    def scores(self, query: str | Sequence[str]) -> list[float]:
        """Scores in [0, 1], one per document; the best match scores 1.0, no match 0.0."""
        raw = self.raw_scores(query)
        result = [0.0] * self.n_docs
        best = max(raw.values(), default=0.0)
        if best <= 0:
            return result
        for doc, value in raw.items():
            result[doc] = value / best
        return result

    def top(self, query: str | Sequence[str], k: int) -> list[tuple[int, float]]:
        """The `k` best (doc index, raw score) pairs, best first; ties by index."""
        raw = self.raw_scores(query)
        return sorted(raw.items(), key=lambda item: (-item[1], item[0]))[:k]


class TermStats(NamedTuple):
    """A document reduced to what BM25 needs: its length in terms and its term counts."""

    length: int
    counts: Mapping[str, int]

    @classmethod
    def of(cls, doc_terms: Sequence[str]) -> "TermStats":
        """Stats of a list of terms (as `terms(text)` gives)."""
        return cls(len(doc_terms), Counter(doc_terms))


def query_scores(
    query_terms: Sequence[str],
    docs_terms: Sequence[Sequence[str] | TermStats],
    *,
    k1: float = K1,
    b: float = B,
    normalize: bool = True,
) -> list[float]:
    """The same normalised BM25 scores as `BM25Index(docs_terms).scores(query_terms)`,
    computed without building an inverted index: for one query over many fresh
    documents (the context builder's case) this touches only the query's terms.
    Documents may be term lists or `TermStats` (cacheable per text, the fast path).
    `normalize=False` returns the raw scores (one per document, 0.0 for no match).
    """
    q_counts = Counter(query_terms)
    stats = [d if isinstance(d, TermStats) else TermStats.of(d) for d in docs_terms]
    tfs: dict[str, list[tuple[int, int]]] = {t: [] for t in q_counts}
    for i, doc in enumerate(stats):
        counts = doc.counts
        for term in q_counts:
            tf = counts.get(term)
            if tf:
                tfs[term].append((i, tf))
    raw = bm25_from_tfs(q_counts, tfs, [d.length for d in stats], k1=k1, b=b)
    best = max(raw, default=0.0)
    return [value / best for value in raw] if best > 0 and normalize else raw


def bm25_from_tfs(
    q_counts: Mapping[str, int], tfs: Mapping[str, Sequence[tuple[int, int]]], lengths: Sequence[int], *,
    k1: float = K1, b: float = B,
) -> list[float]:
    """Raw BM25 scores, one per document, from the query's term counts, each query
    term's postings `(doc index, term frequency > 0)` (one per document, any order) and
    every document's length in terms. The formula is written once for fresh documents
    (`query_scores`, `ctxagent.text.statistics.analyse`), so both give the same floats.
    """
    n_docs = len(lengths)
    avg = (sum(lengths) / n_docs if n_docs else 0.0) or 1.0
    raw = [0.0] * n_docs
    for term, postings in tfs.items():
        idf = _idf(len(postings), n_docs)
        query_weight = 1 + math.log(q_counts[term])
        for i, tf in postings:
            norm = tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[i] / avg))
            raw[i] += idf * norm * query_weight
    return raw


def bm25_term(tf: int, length: int, q_count: int, df: int, n_docs: int, avg_len: float, *,
              k1: float = K1, b: float = B) -> float:
    """One query term's share of a document's BM25: `tf` occurrences in a document of
    `length` terms, the term `q_count` times in the query and in `df` of `n_docs` documents
    of mean length `avg_len` (for indexes that keep these counts themselves)."""
    norm = tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / (avg_len or 1.0)))
    return _idf(df, n_docs) * norm * (1 + math.log(q_count))


def _idf(df: int, n_docs: int) -> float:
    """Inverse document frequency with the +1 floor that keeps it positive."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def recency_score(timestamp: float, *, now: float | None = None, half_life_s: float = 3600.0) -> float:
    """Exponential decay in [0, 1]: 1.0 now, 0.5 after `half_life_s` seconds, and so on.

    `timestamp` and `now` are Unix seconds. Timestamps in the future count as now.
    """
    if half_life_s <= 0:
        raise ValueError("half_life_s must be > 0 seconds")
    now = time.time() if now is None else now
    age = max(0.0, now - timestamp)
    return 0.5 ** (age / half_life_s)
