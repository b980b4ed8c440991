"""Rank workspace files for a question: BM25 at two granularities with field weights.

A file index and a chunk index over `ctxagent.text.scoring.BM25Index`, field weights by
term repetition (BM25F); score = FILE_WEIGHT x file + CHUNK_WEIGHT x best chunk, plus
LITERAL_BONUS. Weights from `benchmarks/context_fetch_recall.py` (docs/context-fetch.md).
The terms live in an `IndexStore` (`ctxagent.fetch.store`, SQLite), refreshed from each
file's (mtime, size, inode); files and chunks are scored with the project's BM25.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Iterable

from ctxagent.fetch.chunks import Chunk, split_chunks
from ctxagent.fetch.store import IndexedFile, IndexStore
from ctxagent.fetch.walk import FileEntry, read_text
from ctxagent.text.terms import terms

FILE_WEIGHT = 1.0
CHUNK_WEIGHT = 2.0
NAME_WEIGHT = 3
PARENT_WEIGHT = 1
PATH_WEIGHT = 1
LITERAL_BONUS = 1.0
#: Chunks per file remembered for a query (they locate the hit lines).
TOP_CHUNKS = 3
#: Best chunks (by FTS5's bm25()) scored per query, among the allowed files; recall@5 on
#: benchmarks/context_fetch_recall.py is the same as with all of them (docs/benchmarks.md).
CHUNK_CANDIDATES = 600
#: Files tokenized between two writes: a first build commits as it goes, and holds the
#: write lock only while it writes.
WRITE_BATCH = 200

_MARKDOWN = (".md", ".markdown", ".rst", ".txt")


@dataclass
class RankedFile:
    """A ranked file: `score` in [0, 1] (the best file scores 1.0); `chunks` holds its
    best (chunk, raw chunk score) pairs, best first."""

    rel: str
    score: float
    chunks: list[tuple[Chunk, float]] = field(default_factory=list)


def path_terms(rel: str) -> list[str]:
    """Terms of a relative path without its extension: `rich/progress_bar.py` ->
    rich, progress_bar, progress, bar."""
    return terms(re.sub(r"\.[A-Za-z0-9]+$", "", rel).replace("/", " "))


def index_file(rel: str, text: str, sig: tuple[int, int, int]) -> IndexedFile:
    """Tokenize one file into its chunk and file documents (see the module doc). The chunks
    cover every line once, in order, and no term spans a line break, so the file's text
    terms are its chunks' body terms end to end: each line is tokenized once."""
    lines = text.split("\n")
    chunks = split_chunks(text, markdown=rel.lower().endswith(_MARKDOWN))
    p_terms = path_terms(rel)
    chunk_terms, bodies, names = [], [], []
    for chunk in chunks:
        body = terms("\n".join(lines[chunk.start : chunk.end]))
        name = terms(chunk.name)
        chunk_terms.append(body + name * NAME_WEIGHT + terms(chunk.parent) * PARENT_WEIGHT + p_terms * PATH_WEIGHT)
        bodies.extend(body)
        names.extend(name)
    return IndexedFile(rel, sig, chunks, bodies + names + p_terms * PATH_WEIGHT, chunk_terms)


class WorkspaceIndex:
    """The ranking index of one workspace, refreshed incrementally. Thread-safe.
    `store`: where the terms live (default: a new in-memory `IndexStore`)."""

    def __init__(self, store: IndexStore | None = None) -> None:
        self.store = store if store is not None else IndexStore(None)
        self._lock = threading.Lock()
        self._forced: set[str] | None = set()  # None: every file

    def __len__(self) -> int:
        return self.store.count()

    def refresh(self, entries: list[FileEntry]) -> int:
        """Bring the index in line with `entries` (the workspace's files now): re-read new,
        changed and forgotten files, drop deleted ones. Returns how many files this call
        wrote or dropped (0 when nothing changed, or another process had done it)."""
        with self._lock:
            forced, self._forced = self._forced, set()
            stored = self.store.signatures()
            changed = [e for e in entries if stored.get(e.rel) != e.sig or forced is None or e.rel in forced]
            removed = set(stored) - {e.rel for e in entries}
            done = self.store.write([], removed) if removed else 0
            for start in range(0, len(changed), WRITE_BATCH):
                batch = changed[start : start + WRITE_BATCH]
                docs = [_index_entry(e) for e in batch]
                done += self.store.write(docs, [], force={e.rel for e in batch if forced is None or e.rel in forced})
            return done

    def forget(self, rels: Iterable[str] | None = None) -> None:
        """Mark files (all if None) as changed, so the next `refresh` re-reads them even
        if their (mtime, size, inode) looks the same."""
        with self._lock:
            if rels is None or self._forced is None:
                self._forced = None
            else:
                self._forced.update(rels)

    def rank(self, query: str, *, allowed: set[str] | None = None, literal: set[str] | None = None,
             limit: int = 10) -> list[RankedFile]:
        """The `limit` best files for `query`, best first, scores in [0, 1].

        `allowed`: only these paths may appear (the glob filter); `literal`: paths whose
        text contains the query verbatim (they get LITERAL_BONUS). Files with no
        matching term and no literal hit are never returned.
        """
        return self.scores(query, allowed=allowed).ranked(literal=literal, limit=limit)

    def scores(self, query: str, *, allowed: set[str] | None = None) -> QueryScores:
        """The BM25 part of `rank`, before the literal hits are known (`QueryScores.ranked`)."""
        q_terms = terms(query)
        file_raw = self.store.file_scores(q_terms)
        chunk_raw = self.store.chunk_scores(q_terms, limit=CHUNK_CANDIDATES, only=allowed)
        return QueryScores(self.store, file_raw, _best_chunks(chunk_raw), max(chunk_raw.values(), default=0.0),
                           allowed)


@dataclass
class QueryScores:
    """Raw BM25 of one query: files {rel: score}, best chunks {rel: [(chunk number, score)]},
    the best chunk score, and the paths allowed (None: all). The combined scores and their
    order are computed when made (in the thread that ranks while ripgrep runs)."""

    store: IndexStore
    file_raw: dict[str, float]
    best_chunks: dict[str, list[tuple[int, float]]]
    chunk_top: float
    allowed: set[str] | None
    base: dict[str, float] = field(init=False)
    order: list[str] = field(init=False)

    def __post_init__(self) -> None:
        file_raw, best_chunks = self.file_raw, self.best_chunks
        f_top = max(file_raw.values(), default=0.0) or 1.0
        c_top = self.chunk_top or 1.0
        self.base = {}
        for rel in set(file_raw) | set(best_chunks):
            top_chunk = best_chunks[rel][0][1] if rel in best_chunks else 0.0
            self.base[rel] = FILE_WEIGHT * file_raw.get(rel, 0.0) / f_top + CHUNK_WEIGHT * top_chunk / c_top
        self.order = sorted((rel for rel in self.base if self.allowed is None or rel in self.allowed),
                            key=lambda rel: (-self.base[rel], rel))

    def ranked(self, *, literal: set[str] | None = None, limit: int = 10) -> list[RankedFile]:
        """The `limit` best files once the literal hits are known (see `WorkspaceIndex.rank`).
        Only the best `limit` by BM25 and the literal hits can be among them."""
        bonus = self.store.indexed(literal) if literal else set()
        candidates = set(self.order[:limit]) | {rel for rel in bonus if self.allowed is None or rel in self.allowed}
        scores = {rel: self.base.get(rel, 0.0) + (LITERAL_BONUS if rel in bonus else 0.0) for rel in candidates}
        order = sorted(candidates, key=lambda rel: (-scores[rel], rel))[:limit]
        spans = self.store.chunks(order)
        top = scores[order[0]] if order else 1.0
        best_chunks = self.best_chunks
        return [RankedFile(rel, round(scores[rel] / top, 4), [(spans[rel][n], value) for n, value in
                                                              best_chunks.get(rel, []) if n < len(spans.get(rel, []))])
                for rel in order]


def _index_entry(entry: FileEntry) -> IndexedFile:
    """The terms of one listed file; a binary or unreadable file is stored without any, so
    it is not read again until it changes."""
    text = read_text(entry.path)
    if text is None:
        return IndexedFile(entry.rel, entry.sig, [], [], [])
    return index_file(entry.rel, text, entry.sig)


def _best_chunks(chunk_raw: dict[tuple[str, int], float]) -> dict[str, list[tuple[int, float]]]:
    """{rel: [(chunk number, raw score)] best first, at most TOP_CHUNKS}."""
    by_file: dict[str, list[tuple[int, float]]] = {}
    for (rel, n), value in chunk_raw.items():
        by_file.setdefault(rel, []).append((n, value))
    return {rel: sorted(items, key=lambda item: (-item[1], item[0]))[:TOP_CHUNKS] for rel, items in by_file.items()}
