"""What selection needs to know about many texts at once, computed once per distinct chunk.

For each candidate, selection needs its BM25 score for the query (its length in index
terms and the frequency of each query term) and a lower bound of its token count (so
that only texts that might fit are counted exactly, see `TokenCounter.floor`). All of
these are sums over the text's chunks (`ctxagent.context.terms.chunks`: no index term
and no tokenizer piece crosses a chunk boundary), so `analyse` works chunk by chunk:

- each distinct chunk's figures (terms, token lower bound, estimate lower bound) are
  computed once (`_ChunkFigures`);
- a text seen for the first time costs C-speed passes over its chunks: summing their
  figures, and intersecting them with the chunks that hold a query term (found among
  the build's distinct chunks, also at C speed), so only those are counted term by term;
- a text seen before costs a dictionary lookup, and from its second sighting on, its
  term counts are kept, as an agent loop sends the same packets call after call.

The scores are those of `scoring.query_scores(query_terms, [terms(t) for t in texts],
normalize=False)`, to the last bit (the same arithmetic, `scoring.bm25_from_tfs`).
"""

from __future__ import annotations

from collections import Counter
from itertools import chain, compress
from operator import not_
from typing import NamedTuple, Sequence

from ctxagent.context.scoring import bm25_from_tfs
from ctxagent.context.terms import chunk_terms, chunks, evict_oldest
from ctxagent.context.tokens import PER_ALNUM, PER_PUNCT, estimate_value, piece_floor

CHUNKS_MAX = 262_144  # distinct chunks whose figures are kept (the older half goes when full)
FACTS_MAX = 65_536  # texts whose figures are kept (likewise)
COUNTS_MAX = 32_768  # texts whose term counts are kept (likewise)
_BITS = 40  # a chunk's three figures packed in one int, 40 bits each: one sum adds them all
_MASK = (1 << _BITS) - 1


class TextFacts(NamedTuple):
    """A text's length in index terms, a lower bound of its exact cl100k/o200k token count
    (`pieces`, see `tokens.piece_floor`) and one of its unrounded estimate (`value`, tokens)."""

    length: int
    pieces: int
    value: float


class _ChunkFigures(dict):
    """chunk (bytes) -> its figures packed in one int (terms, token lower bound, 100 x
    estimate lower bound; 40 bits each), computed on first lookup. The older half goes
    when it holds CHUNKS_MAX chunks (figures depend on the chunk alone: nothing goes stale)."""

    def __missing__(self, chunk: bytes) -> int:
        text = chunk.decode("utf-8", "surrogatepass")
        if chunk.isascii():  # letters, digits and `_` `.` `'` only (see terms.chunks)
            punct = len(chunk) - len(chunk.translate(None, b"_.'"))
            value = (len(chunk) - punct) * PER_ALNUM + punct * PER_PUNCT
        else:
            value = estimate_value(text)
        if len(self) >= CHUNKS_MAX:
            evict_oldest(self, CHUNKS_MAX // 2)
        figures = self[chunk] = len(chunk_terms(chunk)) << 2 * _BITS | piece_floor(text) << _BITS | int(100 * value)
        return figures


_FIGURES = _ChunkFigures()
# Plain dicts of ints (packed figures) and of term -> count dicts: the garbage collector
# need not track them, so large caches do not slow its full passes down.
_FACTS: dict[str, int] = {}
_COUNTS: dict[str, dict[str, int]] = {}


def analyse(texts: Sequence[str], query_terms: Sequence[str]) -> tuple[list[float], list[TextFacts]]:
    """The raw BM25 score of each text for `query_terms` (equal to `query_scores(...,
    normalize=False)` over `terms(text)`), and each text's `TextFacts`."""
    figures = _FIGURES.__getitem__
    q_counts = Counter(query_terms)
    tfs: dict[str, list[tuple[int, int]]] = {term: [] for term in q_counts}
    facts: list[TextFacts] = []
    fresh: list[tuple[int, list[bytes]]] = []
    for doc, text in enumerate(texts):
        packed = _FACTS.get(text)
        if packed is None:
            parts = chunks(text)
            packed = sum(map(figures, parts))
            fresh.append((doc, parts))
            _remember(_FACTS, FACTS_MAX, text, packed)
        else:
            _add_counted(tfs, doc, _COUNTS.get(text) or _count(text))
        facts.append(_facts_of(packed))
    if fresh and q_counts:
        _add_chunked(tfs, fresh, _holding(fresh, list(q_counts)))
    return bm25_from_tfs(q_counts, tfs, [f.length for f in facts]), facts


def text_facts(text: str) -> TextFacts:
    """The `TextFacts` of one text (cached like `analyse`'s)."""
    return analyse([text], [])[1][0]


def _facts_of(packed: int) -> TextFacts:
    return TextFacts(packed >> 2 * _BITS, packed >> _BITS & _MASK, (packed & _MASK) / 100)


def _remember(cache: dict, limit: int, key: str, value: object) -> None:
    if len(cache) >= limit:
        evict_oldest(cache, limit // 2)
    cache[key] = value


def _holding(fresh: list[tuple[int, list[bytes]]], query: list[str]) -> dict[bytes, list[tuple[int, int]]]:
    """chunk -> [(index of a query term, its count in the chunk)] for the chunks of `fresh`
    texts that hold a query term (the test per distinct chunk runs at C speed)."""
    distinct = list(set(chain.from_iterable(parts for _, parts in fresh)))
    misses = map(set(query).isdisjoint, map(chunk_terms, distinct))
    out: dict[bytes, list[tuple[int, int]]] = {}
    for chunk in compress(distinct, map(not_, misses)):
        chunk_t = chunk_terms(chunk)
        out[chunk] = [(i, chunk_t.count(term)) for i, term in enumerate(query) if term in chunk_t]
    return out


def _count(text: str) -> dict[str, int]:
    """The term counts of a text seen before (kept from now on)."""
    counts = dict(Counter(chain.from_iterable(map(chunk_terms, chunks(text)))))
    _remember(_COUNTS, COUNTS_MAX, text, counts)
    return counts


def _add_counted(tfs: dict[str, list[tuple[int, int]]], doc: int, counts: dict[str, int]) -> None:
    for term, postings in tfs.items():
        tf = counts.get(term)
        if tf:
            postings.append((doc, tf))


def _add_chunked(tfs: dict[str, list[tuple[int, int]]], fresh: list[tuple[int, list[bytes]]],
                 holding: dict[bytes, list[tuple[int, int]]]) -> None:
    """Term frequencies of first-seen texts: only their chunks that hold a query term count,
    each standing for the indexes of the query terms it holds (repeated as often)."""
    expand = {chunk: tuple(i for i, per_chunk in hits for _ in range(per_chunk)) for chunk, hits in holding.items()}
    holds, indexes = expand.__contains__, expand.__getitem__
    by_index = list(tfs.values())
    for doc, parts in fresh:
        found = list(filter(holds, parts))
        if found:
            for i, tf in Counter(chain.from_iterable(map(indexes, found))).items():
                by_index[i].append((doc, tf))
