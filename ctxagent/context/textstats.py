"""What selection needs to know about a text, computed once per distinct chunk.

A candidate's BM25 relevance needs its length in index terms and how often each query
term occurs in it; its budget check needs a lower bound of its token count (so that
only texts that might fit are counted exactly). All three are sums over the text's
chunks (`ctxagent.context.terms.chunks`: no term and no tokenizer piece crosses a chunk
boundary), so a `Vocab` computes them once per distinct chunk and a text becomes a
tuple of chunk ids plus two sums (`TextStats`), cached per text. (The lower bound of
the *estimated* count, for models counted by estimate, is summed on demand: `value`.)

`Vocab.bm25(query_terms, stats)` gives the same scores, to the last bit, as
`scoring.query_scores(query_terms, [terms(text) ...], normalize=False)`: the chunks
holding a query term are looked up in an inverted index (term -> chunk ids), so a
document costs one set intersection of its chunk ids, and only documents that share a
term with the query are counted term by term.

The vocabulary is process-wide; when it holds VOCAB_MAX chunks, the next `vocab()` call
starts a fresh one (a build holds on to the one it started with, so its ids never mix).
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import NamedTuple, Sequence

from ctxagent.context.scoring import B, K1, bm25_from_tfs
from ctxagent.context.terms import chunk_terms, chunk_text, chunks
from ctxagent.context.tokens import estimate_value, piece_floor

VOCAB_MAX = 500_000  # distinct chunks before the vocabulary starts afresh (~60 MB)
TEXTS_MAX = 65_536  # texts whose stats are kept; the cache is emptied when it is full


class TextStats(NamedTuple):
    """One text reduced to chunk ids (in order), its length in index terms, and a lower
    bound of its exact cl100k/o200k token count (`pieces`, see `tokens.piece_floor`)."""

    ids: tuple[int, ...]
    length: int
    pieces: int


_SHIFT = 32  # per-chunk figures are packed as terms << _SHIFT | pieces: one sum gives both


class _Values(dict):
    """chunk id -> `estimate_value` of the chunk, computed on first use."""

    def __init__(self, vocab: "Vocab") -> None:
        super().__init__()
        self.vocab = vocab

    def __missing__(self, cid: int) -> float:
        value = self[cid] = estimate_value(chunk_text(self.vocab.chunks[cid]))
        return value


class _ChunkIds(dict):
    """chunk (bytes) -> id; a new chunk is registered in the vocabulary on first lookup."""

    def __init__(self, vocab: "Vocab") -> None:
        super().__init__()
        self.vocab = vocab

    def __missing__(self, chunk: bytes) -> int:
        return self.vocab.register(chunk)


class Vocab:
    """Chunks seen so far, their per-chunk figures, and the term -> chunk ids index."""

    def __init__(self) -> None:
        self.ids = _ChunkIds(self)
        self.chunks: list[bytes] = []
        self.terms: list[tuple[str, ...]] = []
        self.packed: list[int] = []
        self.values = _Values(self)
        self.postings: dict[str, list[int]] = {}
        self.texts: dict[str, TextStats] = {}
        self.lock = threading.Lock()

    def register(self, chunk: bytes) -> int:
        """The id of `chunk`, adding it (terms, length, token bounds, postings) if new."""
        text = chunk_text(chunk)
        chunk_t = chunk_terms(chunk)
        with self.lock:
            known = dict.get(self.ids, chunk)
            if known is not None:
                return known
            cid = len(self.terms)
            self.chunks.append(chunk)
            self.terms.append(chunk_t)
            self.packed.append(len(chunk_t) << _SHIFT | piece_floor(text))
            for term in set(chunk_t):
                self.postings.setdefault(term, []).append(cid)
            self.ids[chunk] = cid
            return cid

    def stats(self, text: str) -> TextStats:
        """The `TextStats` of `text` (cached per text, up to TEXTS_MAX texts)."""
        found = self.texts.get(text)
        if found is not None:
            return found
        ids = tuple(map(self.ids.__getitem__, chunks(text)))
        packed = sum(map(self.packed.__getitem__, ids))
        found = TextStats(ids, packed >> _SHIFT, packed & ((1 << _SHIFT) - 1))
        if len(self.texts) >= TEXTS_MAX:
            self.texts.clear()
        self.texts[text] = found
        return found

    def value(self, stats: TextStats) -> float:
        """A lower bound of the unrounded estimate (`tokens.estimate_value`) of the text."""
        return sum(map(self.values.__getitem__, stats.ids))

    def bm25(self, query_terms: Sequence[str], docs: Sequence[TextStats], *, k1: float = K1, b: float = B) -> list[float]:
        """Raw BM25 score of each of `docs` (stats from this vocabulary) for `query_terms`:
        equal to `query_scores(query_terms, [terms of each doc], normalize=False)`."""
        q_counts = Counter(query_terms)
        order = {term: i for i, term in enumerate(q_counts)}
        hits_of: dict[int, list[tuple[int, int]]] = {}  # chunk id -> [(query term index, count in chunk)]
        for term, i in order.items():
            for cid in self.postings.get(term, ()):
                hits_of.setdefault(cid, []).append((i, self.terms[cid].count(term)))
        wanted = set(hits_of)
        tfs: list[dict[int, int]] = [{} for _ in order]  # per query term: doc -> frequency, docs ascending
        for doc, stats in enumerate(docs):
            found = wanted.intersection(stats.ids)
            for cid in found:
                times = stats.ids.count(cid)
                for i, per_chunk in hits_of[cid]:
                    tf = tfs[i]
                    tf[doc] = tf.get(doc, 0) + times * per_chunk
        postings = {term: list(tf.items()) for term, tf in zip(q_counts, tfs)}
        return bm25_from_tfs(q_counts, postings, [d.length for d in docs], k1=k1, b=b)


_current = Vocab()
_swap_lock = threading.Lock()


def vocab() -> Vocab:
    """The process-wide vocabulary (a fresh one once the current holds VOCAB_MAX chunks).
    Use one `Vocab` for a whole build: ids of different vocabularies do not mix."""
    global _current
    if len(_current.terms) >= VOCAB_MAX:
        with _swap_lock:
            if len(_current.terms) >= VOCAB_MAX:
                _current = Vocab()
    return _current
