"""What selection needs to know about many texts at once, computed once per distinct chunk.

Per candidate: its BM25 score for the query and a lower bound of its tokens, from its chunks
(`ctxagent.text.terms.chunks`), cached in `_FIGURES` (per chunk), `_QueryChunks` (per query)
and `_TEXTS` (per text and query); how: docs/text.md ("Selection statistics").
The scores are those of `scoring.query_scores(query_terms, [terms(t) for t in texts],
normalize=False)`, to the last bit (the same arithmetic, `scoring.bm25_from_tfs`;
`tests/text/test_statistics.py` pins it). Time: `benchmarks/context_build.py`.
"""

from __future__ import annotations

from collections import Counter
from itertools import chain
from typing import NamedTuple, Sequence

from ctxagent.text.scoring import bm25_from_tfs
from ctxagent.text.terms import chunk_terms, chunks, evict_oldest
from ctxagent.text.tokens import PER_ALNUM, PER_PUNCT, estimate_value, piece_floor

CHUNKS_MAX = 262_144  # distinct chunks whose figures are kept (the older half goes when full)
TEXTS_MAX = 65_536  # texts whose figures and query-term counts are kept (likewise)
_BITS = 40  # each figure has 40 bits of one int, so one sum adds them all
_MASK = (1 << _BITS) - 1
_HOLDS = 1 << 3 * _BITS  # the field above the three figures: chunks holding a query term

# (terms, token lower bound, 100 x estimate lower bound, the query's terms, ((term, count), ...))
Entry = tuple[int, int, int, tuple[str, ...], tuple[tuple[str, int], ...]]


class TextFacts(NamedTuple):
    """A text's length in index terms, a lower bound of its exact cl100k/o200k token count
    (`pieces`, see `tokens.piece_floor`) and one of its unrounded estimate (`value`, tokens)."""

    length: int
    pieces: int
    value: float


def chunk_figures(chunk: bytes) -> tuple[tuple[str, ...], int, int, int]:
    """The figures of one chunk (bytes, see `terms.chunks`): (its terms, their number, a
    lower bound of its exact token count (`tokens.piece_floor`), 100 x a lower bound of its
    unrounded estimate, rounded down (`tokens.estimate_value`)). Both paths of `analyse`
    get a chunk's figures here alone, so they agree by construction."""
    text = chunk.decode("utf-8", "surrogatepass")
    if chunk.isascii():  # letters, digits and `_` `.` `'` only (see terms.chunks)
        punct = len(chunk) - len(chunk.translate(None, b"_.'"))
        value = (len(chunk) - punct) * PER_ALNUM + punct * PER_PUNCT
    else:
        value = estimate_value(text)
    found = chunk_terms(chunk)
    return found, len(found), piece_floor(text), int(100 * value)


class _ChunkFigures(dict):
    """chunk (bytes) -> (its figures packed in one int: terms, token lower bound, 100 x
    estimate lower bound, 40 bits each; its terms), computed on first lookup. The older
    half goes when it holds CHUNKS_MAX chunks (they depend on the chunk alone: nothing
    goes stale)."""

    def __missing__(self, chunk: bytes) -> tuple[int, tuple[str, ...]]:
        found, n_terms, pieces, value100 = chunk_figures(chunk)
        if len(self) >= CHUNKS_MAX:
            evict_oldest(self, CHUNKS_MAX // 2)
        info = self[chunk] = (n_terms << 2 * _BITS | pieces << _BITS | value100, found)
        return info


class _QueryChunks(dict):
    """chunk -> its packed figures (`_FIGURES`), plus `_HOLDS` if it holds a term of this
    table's query; filled on first lookup. `holding`: chunk -> the query terms it holds
    (with repeats), for those chunks only."""

    def __init__(self, key: tuple[str, ...]) -> None:
        super().__init__()
        self.key = key
        self.wanted = frozenset(key)
        self.holding: dict[bytes, tuple[str, ...]] = {}

    def __missing__(self, chunk: bytes) -> int:
        packed, found = _FIGURES[chunk]
        if not self.wanted.isdisjoint(found):
            self.holding[chunk] = tuple(filter(self.wanted.__contains__, found))
            packed |= _HOLDS
        self[chunk] = packed
        return packed


_FIGURES = _ChunkFigures()
_TABLE = _QueryChunks(())  # the latest query's table: one query at a time, the loop's case
# text -> its Entry: its figures, the query's terms as a tuple, and ((term, count), ...) of
# those in the text: plain tuples, strings and ints, which the garbage collector need not track.
_TEXTS: dict[str, Entry] = {}


def analyse(texts: Sequence[str], query_terms: Sequence[str]) -> tuple[list[float], list[TextFacts]]:
    """The raw BM25 score of each text for `query_terms` (equal to `query_scores(...,
    normalize=False)` over `terms(text)`), and each text's `TextFacts`."""
    q_counts = Counter(query_terms)
    key = tuple(q_counts)
    entries = {text: entry for text in texts if (entry := _TEXTS.get(text)) is not None and entry[3] == key}
    if len(entries) < len(texts):
        entries.update(_learn([text for text in dict.fromkeys(texts) if text not in entries], key))
    tfs: dict[str, list[tuple[int, int]]] = {term: [] for term in key}
    facts = []
    for doc, text in enumerate(texts):
        n_terms, pieces, value100, _, found = entries[text]
        facts.append(TextFacts(n_terms, pieces, value100 / 100))
        for term, tf in found:
            tfs[term].append((doc, tf))
    return bm25_from_tfs(q_counts, tfs, [f.length for f in facts]), facts


def text_facts(text: str) -> TextFacts:
    """The `TextFacts` of one text (cached like `analyse`'s)."""
    entry = _TEXTS.get(text)
    if entry is None:
        n_terms, pieces, value100 = _unpack(sum(info[0] for info in map(_FIGURES.__getitem__, chunks(text))))
        return TextFacts(n_terms, pieces, value100 / 100)
    return TextFacts(entry[0], entry[1], entry[2] / 100)


def _learn(texts: list[str], key: tuple[str, ...]) -> dict[str, Entry]:
    """Entries (see `_TEXTS`) of distinct `texts` for the query terms `key`, kept in `_TEXTS`."""
    learnt = _learn_python(texts, key)
    _TEXTS.update(learnt)
    if len(_TEXTS) > TEXTS_MAX:
        evict_oldest(_TEXTS, TEXTS_MAX // 2)
    return learnt


def _learn_python(texts: list[str], key: tuple[str, ...]) -> dict[str, Entry]:
    """`_learn`'s entries, by the per-query chunk table (`_QueryChunks`)."""
    global _TABLE
    table = _TABLE
    if table.key != key or len(table) >= CHUNKS_MAX:
        table = _TABLE = _QueryChunks(key)
    figures_of, holding = table.__getitem__, table.holding
    learnt = {}
    for text in texts:
        parts = chunks(text)
        packed = sum(map(figures_of, parts))
        found = ()
        if packed >= _HOLDS:
            bag = chain.from_iterable(map(holding.__getitem__, filter(holding.__contains__, parts)))
            found = tuple(Counter(bag).items())
        learnt[text] = (*_unpack(packed), key, found)
    return learnt


def _unpack(packed: int) -> tuple[int, int, int]:
    """(terms, token lower bound, 100 x estimate lower bound) from figures packed as `_FIGURES` packs them."""
    return packed >> 2 * _BITS & _MASK, packed >> _BITS & _MASK, packed & _MASK


def clear_caches() -> None:
    """Forget every cached chunk and text (tests and benchmarks measure cold builds with it)."""
    global _TABLE
    _TEXTS.clear()
    _FIGURES.clear()
    _TABLE = _QueryChunks(())


def chunks_held() -> int:
    """Distinct chunks whose figures are kept now (at most CHUNKS_MAX)."""
    return len(_FIGURES)
