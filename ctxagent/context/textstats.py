"""What selection needs to know about many texts at once, computed once per distinct chunk.

For each candidate, selection needs its BM25 score for the query (its length in index
terms and the frequency of each query term) and a lower bound of its token count (so
that only texts that might fit are counted exactly, see `TokenCounter.floor`). All of
these come from the text's chunks (`ctxagent.context.terms.chunks`: no index term and
no tokenizer piece crosses a chunk boundary):

- each distinct chunk's figures (terms, token lower bound, estimate lower bound) are
  computed once and packed in one int (`_ChunkFigures`), and its terms are cached too
  (`terms.chunk_terms`), so a new text costs C-speed passes over its chunks: one sum
  of their figures and one count of their terms; no regex and no stemmer run for a
  chunk seen before;
- a text seen before costs one dictionary lookup (its figures and term counts are
  kept), as an agent loop sends the same packets call after call.

The scores are those of `scoring.query_scores(query_terms, [terms(t) for t in texts],
normalize=False)`, to the last bit (the same arithmetic, `scoring.bm25_from_tfs`).
"""

from __future__ import annotations

from collections import Counter
from itertools import chain
from operator import itemgetter
from typing import NamedTuple, Sequence

from ctxagent.context.scoring import bm25_from_tfs
from ctxagent.context.terms import chunk_terms, chunks, evict_oldest
from ctxagent.context.tokens import PER_ALNUM, PER_PUNCT, estimate_value, piece_floor

CHUNKS_MAX = 262_144  # distinct chunks whose figures are kept (the older half goes when full)
TEXTS_MAX = 32_768  # texts whose figures and term counts are kept (likewise)
_BITS = 40  # a chunk's three figures packed in one int, 40 bits each: one sum adds them all
_MASK = (1 << _BITS) - 1


class TextFacts(NamedTuple):
    """A text's length in index terms, a lower bound of its exact cl100k/o200k token count
    (`pieces`, see `tokens.piece_floor`) and one of its unrounded estimate (`value`, tokens)."""

    length: int
    pieces: int
    value: float


class _ChunkFigures(dict):
    """chunk (bytes) -> (its figures packed in one int: terms, token lower bound, 100 x
    estimate lower bound, 40 bits each; its terms), computed on first lookup. The older
    half goes when it holds CHUNKS_MAX chunks (they depend on the chunk alone: nothing
    goes stale). One lookup per chunk gives a text everything: large dicts are slow to
    probe (memory, not instructions), so the text pass touches only this one."""

    def __missing__(self, chunk: bytes) -> tuple[int, tuple[str, ...]]:
        text = chunk.decode("utf-8", "surrogatepass")
        if chunk.isascii():  # letters, digits and `_` `.` `'` only (see terms.chunks)
            punct = len(chunk) - len(chunk.translate(None, b"_.'"))
            value = (len(chunk) - punct) * PER_ALNUM + punct * PER_PUNCT
        else:
            value = estimate_value(text)
        if len(self) >= CHUNKS_MAX:
            evict_oldest(self, CHUNKS_MAX // 2)
        chunk_t = chunk_terms(chunk)
        info = self[chunk] = (len(chunk_t) << 2 * _BITS | piece_floor(text) << _BITS | int(100 * value), chunk_t)
        return info


_FIGURES = _ChunkFigures()
_PACKED, _TERMS = itemgetter(0), itemgetter(1)
# text -> (packed figures, term -> count): plain dicts, tuples and ints, which the garbage
# collector need not track, so a large cache does not slow its full passes down.
_TEXTS: dict[str, tuple[int, dict[str, int]]] = {}


def analyse(texts: Sequence[str], query_terms: Sequence[str]) -> tuple[list[float], list[TextFacts]]:
    """The raw BM25 score of each text for `query_terms` (equal to `query_scores(...,
    normalize=False)` over `terms(text)`), and each text's `TextFacts`."""
    q_counts = Counter(query_terms)
    tfs: dict[str, list[tuple[int, int]]] = {term: [] for term in q_counts}
    facts: list[TextFacts] = []
    for doc, text in enumerate(texts):
        packed, counts = _TEXTS.get(text) or _learn(text)
        for term, postings in tfs.items():
            tf = counts.get(term)
            if tf:
                postings.append((doc, tf))
        facts.append(_facts_of(packed))
    return bm25_from_tfs(q_counts, tfs, [f.length for f in facts]), facts


def text_facts(text: str) -> TextFacts:
    """The `TextFacts` of one text (cached like `analyse`'s)."""
    return _facts_of((_TEXTS.get(text) or _learn(text))[0])


def _learn(text: str) -> tuple[int, dict[str, int]]:
    """A new text's packed figures and term counts, from its chunks (kept for its next sightings)."""
    infos = list(map(_FIGURES.__getitem__, chunks(text)))
    known = sum(map(_PACKED, infos)), dict(Counter(chain.from_iterable(map(_TERMS, infos))))
    if len(_TEXTS) >= TEXTS_MAX:
        evict_oldest(_TEXTS, TEXTS_MAX // 2)
    _TEXTS[text] = known
    return known


def _facts_of(packed: int) -> TextFacts:
    return TextFacts(packed >> 2 * _BITS, packed >> _BITS & _MASK, (packed & _MASK) / 100)
