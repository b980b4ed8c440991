"""Rank workspace files for a question: BM25 at two granularities with field weights.

A file index and a chunk index over `ctxagent.text.scoring.BM25Index`, field weights by
term repetition (BM25F); score = FILE_WEIGHT x file + CHUNK_WEIGHT x best chunk, plus
LITERAL_BONUS. Weights from `benchmarks/context_fetch_recall.py` (docs/context-fetch.md).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field, replace
from typing import Iterable

from ctxagent.fetch.chunks import Chunk, split_chunks
from ctxagent.fetch.walk import FileEntry, read_text
from ctxagent.text.scoring import BM25Index
from ctxagent.text.terms import terms

FILE_WEIGHT = 1.0
CHUNK_WEIGHT = 2.0
NAME_WEIGHT = 3
PARENT_WEIGHT = 1
PATH_WEIGHT = 1
LITERAL_BONUS = 1.0
#: Chunks per file remembered for a query (they locate the hit lines).
TOP_CHUNKS = 3

STALE = (-1, -1, -1)  # a signature no file has: forces a re-read
_MARKDOWN = (".md", ".markdown", ".rst", ".txt")


@dataclass
class FileDoc:
    """Index terms of one file, valid while the file's `sig` is unchanged."""

    sig: tuple[int, int, int]
    chunks: list[Chunk]
    chunk_terms: list[list[str]]
    file_terms: list[str]


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


def index_file(rel: str, text: str, sig: tuple[int, int, int]) -> FileDoc:
    """Tokenize one file into its chunk and file documents (see the module doc)."""
    lines = text.split("\n")
    chunks = split_chunks(text, markdown=rel.lower().endswith(_MARKDOWN))
    p_terms = path_terms(rel)
    chunk_terms, names = [], []
    for chunk in chunks:
        body = terms("\n".join(lines[chunk.start : chunk.end]))
        name = terms(chunk.name)
        chunk_terms.append(body + name * NAME_WEIGHT + terms(chunk.parent) * PARENT_WEIGHT + p_terms * PATH_WEIGHT)
        names.extend(name)
    return FileDoc(sig, chunks, chunk_terms, terms(text) + names + p_terms * PATH_WEIGHT)


class WorkspaceIndex:
    """The ranking index of one workspace, refreshed incrementally. Thread-safe."""

    def __init__(self) -> None:
        self.docs: dict[str, FileDoc] = {}
        self._lock = threading.Lock()
        self._keys: list[str] = []
        self._chunk_owner: list[tuple[int, int]] = []  # chunk doc -> (file index, chunk index)
        self._file_bm25 = BM25Index([])
        self._chunk_bm25 = BM25Index([])
        self._pos: dict[str, int] = {}
        self._built = False

    def refresh(self, entries: list[FileEntry]) -> int:
        """Bring the index in line with `entries` (the workspace's files now).

        Re-reads new and changed files, drops deleted ones; builds new tables and swaps
        them in, so a concurrent `rank` sees the old or the new index, never a mix.
        Returns how many files changed (0: nothing was rebuilt).
        """
        with self._lock:
            docs = {e.rel: self.docs[e.rel] for e in entries if e.rel in self.docs and self.docs[e.rel].sig == e.sig}
            changed = [e for e in entries if e.rel not in docs]
            removed = len(self.docs) - (len(docs) + sum(1 for e in changed if e.rel in self.docs))
            for entry in changed:
                text = read_text(entry.path)
                if text is not None:
                    docs[entry.rel] = index_file(entry.rel, text, entry.sig)
            if changed or removed or self._built is False:
                self._swap(docs)
            return len(changed) + removed

    def forget(self, rels: Iterable[str] | None = None) -> None:
        """Mark files (all if None) as changed, so the next `refresh` re-reads them even
        if their (mtime, size, inode) looks the same."""
        with self._lock:
            targets = list(self.docs) if rels is None else [r for r in rels if r in self.docs]
            docs = dict(self.docs)
            for rel in targets:
                docs[rel] = replace(docs[rel], sig=STALE)
            self.docs = docs

    def _swap(self, docs: dict[str, FileDoc]) -> None:
        keys = sorted(docs)
        owners, chunk_docs = [], []
        for fi, rel in enumerate(keys):
            for ci, doc_terms in enumerate(docs[rel].chunk_terms):
                owners.append((fi, ci))
                chunk_docs.append(doc_terms)
        self._file_bm25 = BM25Index([docs[rel].file_terms for rel in keys])
        self._chunk_bm25 = BM25Index(chunk_docs)
        self.docs, self._keys, self._chunk_owner = docs, keys, owners
        self._pos = {rel: fi for fi, rel in enumerate(keys)}
        self._built = True

    def rank(self, query: str, *, allowed: set[str] | None = None, literal: set[str] | None = None,
             limit: int = 10) -> list[RankedFile]:
        """The `limit` best files for `query`, best first, scores in [0, 1].

        `allowed`: only these paths may appear (the glob filter); `literal`: paths whose
        text contains the query verbatim (they get LITERAL_BONUS). Files with no
        matching term and no literal hit are never returned.
        """
        q_terms = terms(query)
        with self._lock:
            keys, owners, pos, docs = self._keys, self._chunk_owner, self._pos, self.docs
            file_raw = self._file_bm25.raw_scores(q_terms)
            chunk_raw = self._chunk_bm25.raw_scores(q_terms)
        best_chunks = _best_chunks(chunk_raw, owners)
        f_top = max(file_raw.values(), default=0.0) or 1.0
        c_top = max(chunk_raw.values(), default=0.0) or 1.0
        scores: dict[int, float] = {}
        for fi in set(file_raw) | set(best_chunks):
            top_chunk = best_chunks[fi][0][1] if fi in best_chunks else 0.0
            scores[fi] = FILE_WEIGHT * file_raw.get(fi, 0.0) / f_top + CHUNK_WEIGHT * top_chunk / c_top
        for rel in literal or ():
            if rel in pos:
                scores[pos[rel]] = scores.get(pos[rel], 0.0) + LITERAL_BONUS
        return _ranked(scores, keys, docs, best_chunks, allowed, limit)


def _ranked(scores: dict[int, float], keys: list[str], docs: dict[str, FileDoc],
            best_chunks: dict[int, list[tuple[int, float]]], allowed: set[str] | None, limit: int) -> list[RankedFile]:
    order = sorted((fi for fi in scores if allowed is None or keys[fi] in allowed),
                   key=lambda fi: (-scores[fi], keys[fi]))[:limit]
    top = scores[order[0]] if order else 1.0
    out = []
    for fi in order:
        doc = docs[keys[fi]]
        chunks = [(doc.chunks[ci], value) for ci, value in best_chunks.get(fi, [])]
        out.append(RankedFile(keys[fi], round(scores[fi] / top, 4), chunks))
    return out


def _best_chunks(chunk_raw: dict[int, float], owners: list[tuple[int, int]]) -> dict[int, list[tuple[int, float]]]:
    """{file index: [(chunk index, raw score)] best first, at most TOP_CHUNKS}."""
    by_file: dict[int, list[tuple[int, float]]] = {}
    for doc, value in chunk_raw.items():
        fi, ci = owners[doc]
        by_file.setdefault(fi, []).append((ci, value))
    return {fi: sorted(items, key=lambda item: (-item[1], item[0]))[:TOP_CHUNKS] for fi, items in by_file.items()}
