"""context_fetch's search index in SQLite FTS5: on disk in `.ctxagent/index/`, or in memory.

`file_terms` holds file documents' term counts (scored with the project's BM25,
`ctxagent.text.scoring`); chunks sit in an FTS5 table of the project's own terms (CJK scores
as everywhere), whose `bm25()` picks candidates re-scored the same way; `files` holds each
file's signature (mtime ns, size, inode). Writes are `BEGIN IMMEDIATE` transactions that
re-check signatures (WAL, busy timeout). Details: docs/context-fetch.md (`fetch/store.py`).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

from ctxagent.fetch.chunks import Chunk
from ctxagent.memory.fts import TOKENIZE, doc_frequencies, focus_terms, match_expression, signature
from ctxagent.storage.migrations import Migrations
from ctxagent.storage.sqlite import immediate_transaction, open_sqlite
from ctxagent.text.scoring import bm25_from_tfs, bm25_term

#: Chunk rowids per file: a 1 MB file (walk.MAX_FILE_BYTES) has far fewer chunks.
CHUNK_SLOTS = 1 << 20
#: Chunk rows a query's MATCH may touch: its rarest terms up to this many postings pick the
#: candidates (`ctxagent.memory.fts.focus_terms`; bm25() costs per matching row), which are
#: then scored with every query term. Small workspaces stay under it (all terms match).
MATCH_BUDGET = 2000
INDEX = Migrations("context_fetch index")
Sig = tuple[int, int, int]


@INDEX
def m001_initial(conn: sqlite3.Connection) -> None:
    """Files with their signatures and chunk spans; the two FTS5 tables; the tokenizer stamp."""
    conn.execute("CREATE TABLE files (id INTEGER PRIMARY KEY, rel TEXT NOT NULL UNIQUE, mtime_ns INTEGER NOT NULL, "
                 "size INTEGER NOT NULL, ino INTEGER NOT NULL, length INTEGER NOT NULL, n_chunks INTEGER NOT NULL, "
                 "chunk_length INTEGER NOT NULL, chunks TEXT NOT NULL)")
    conn.execute("CREATE TABLE file_terms (term TEXT NOT NULL, file INTEGER NOT NULL, tf INTEGER NOT NULL, "
                 "PRIMARY KEY (term, file)) WITHOUT ROWID")
    conn.execute(f'CREATE VIRTUAL TABLE chunk_fts USING fts5(terms, tokenize="{TOKENIZE}")')
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


def _setup(conn: sqlite3.Connection) -> None:
    INDEX.apply(conn)
    stamp = signature()
    row = conn.execute("SELECT value FROM meta WHERE key = 'terms'").fetchone()
    if row is None or row[0] != stamp:  # another tokenizer built it: its terms no longer match queries
        with immediate_transaction(conn):
            for table in ("files", "file_terms", "chunk_fts"):
                conn.execute(f"DELETE FROM {table}")
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('terms', ?)", (stamp,))


class IndexedFile:
    """What a refresh writes for one file: its path, signature, chunks and the terms of its
    file document and of each chunk document (same order as `chunks`)."""

    __slots__ = ("rel", "sig", "chunks", "file_terms", "chunk_terms")

    def __init__(self, rel: str, sig: Sig, chunks: list[Chunk], file_terms: list[str],
                 chunk_terms: list[list[str]]) -> None:
        self.rel, self.sig, self.chunks = rel, sig, chunks
        self.file_terms, self.chunk_terms = file_terms, chunk_terms


class IndexStore:
    """One workspace's index. `path`: the database file, or None for an in-memory one (same
    schema). Thread-safe (one connection behind a lock). Raises StorageError on open."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._writes = 0
        self._memo: dict[str, tuple[tuple[int, int], list]] = {}
        if path is None:
            self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            _setup(self._conn)
        else:
            self._conn = open_sqlite(path, _setup, what="the context_fetch index")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def signatures(self) -> dict[str, Sig]:
        """{rel: (mtime ns, size, inode)} of every indexed file."""
        with self._lock:
            rows = self._conn.execute("SELECT rel, mtime_ns, size, ino FROM files").fetchall()
        return {rel: (mtime, size, ino) for rel, mtime, size, ino in rows}

    def count(self) -> int:
        """Number of indexed files."""
        with self._lock:
            return self._conn.execute("SELECT count(*) FROM files").fetchone()[0]

    def write(self, docs: Sequence[IndexedFile], removed: Iterable[str], *, force: Iterable[str] = ()) -> int:
        """Store `docs` (replacing their old rows) and drop `removed`, in one transaction; a doc
        whose signature is already stored (another process was first) is skipped unless its
        path is in `force`. Returns how many files were written or removed."""
        force = set(force)
        removed = list(removed)
        with self._lock, immediate_transaction(self._conn) as conn:
            stored = {rel: sig for rel, *sig in conn.execute(
                "SELECT rel, mtime_ns, size, ino FROM files WHERE rel IN (SELECT value FROM json_each(?))",
                (json.dumps([d.rel for d in docs] + removed),))}
            todo = [d for d in docs if d.rel in force or tuple(stored.get(d.rel, ())) != d.sig]
            gone = [rel for rel in removed if rel in stored]
            for rel in [d.rel for d in todo if d.rel in stored] + gone:
                _delete(conn, rel)
            for doc in todo:
                _insert(conn, doc)
            self._writes += 1
        return len(todo) + len(gone)

    def file_scores(self, q_terms: Sequence[str]) -> dict[str, float]:
        """{rel: raw BM25 of its file document} for every file sharing a term with the query
        (`ctxagent.text.scoring.bm25_from_tfs`: the formula of every other ranking)."""
        counts = Counter(q_terms)
        if not counts:
            return {}
        with self._lock:
            files = self._files()
            rows = self._conn.execute("SELECT term, file, tf FROM file_terms WHERE term IN (SELECT value FROM "
                                      "json_each(?))", (json.dumps(list(counts)),)).fetchall()
        position = {file_id: i for i, (file_id, _, _) in enumerate(files)}
        tfs: dict[str, list[tuple[int, int]]] = {}
        for term, file_id, tf in rows:
            tfs.setdefault(term, []).append((position[file_id], tf))
        raw = bm25_from_tfs(counts, tfs, [length for _, _, length in files])
        hit = {i for postings in tfs.values() for i, _ in postings}
        return {files[i][1]: raw[i] for i in hit}

    def chunk_scores(self, q_terms: Sequence[str], *, limit: int, only: Iterable[str] | None = None
                     ) -> dict[tuple[str, int], float]:
        """{(rel, chunk number): raw BM25} of the best `limit` chunks by FTS5's bm25() (of the
        files `only`, if given), scored as `file_scores` scores files."""
        counts = Counter(q_terms)
        if not counts:
            return {}
        with self._lock:
            df = doc_frequencies(self._conn, "chunk_fts", list(counts))
            n_docs, total = self._totals()
        match = match_expression(focus_terms(list(counts), df, budget=MATCH_BUDGET))
        if match is None:
            return {}
        where, args = "chunk_fts MATCH ?", [match]
        if only is not None:
            where += (f" AND rowid / {CHUNK_SLOTS} IN (SELECT id FROM files WHERE rel IN (SELECT value FROM "
                      "json_each(?)))")
            args.append(json.dumps(list(only)))
        with self._lock:
            rows = self._conn.execute(f"SELECT c.rowid, c.terms, f.rel FROM (SELECT rowid, terms FROM chunk_fts WHERE "
                                      f"{where} ORDER BY rank LIMIT {int(limit)}) c JOIN files f ON f.id = c.rowid / "
                                      f"{CHUNK_SLOTS}", args).fetchall()
        avg = (total or 0) / (n_docs or 1)
        out = {}
        for rowid, text, rel in rows:
            words = text.split()
            found = {t: words.count(t) for t in counts}
            out[(rel, rowid % CHUNK_SLOTS)] = sum(bm25_term(found[t], len(words), q, df.get(t, 0), n_docs, avg)
                                                  for t, q in counts.items() if found[t])
        return out

    def _files(self) -> list[tuple[int, str, int]]:
        """(id, rel, document length) of every file, cached while the database is unchanged."""
        return self._cached("files", "SELECT id, rel, length FROM files")

    def _totals(self) -> tuple[int, int]:
        """(chunk documents, their total length in terms), cached like `_files`."""
        n_docs, total = self._cached("totals", "SELECT sum(n_chunks), sum(chunk_length) FROM files")[0]
        return n_docs or 0, total or 0

    def _cached(self, name: str, sql: str) -> list:
        # PRAGMA data_version changes when another connection commits; our own writes count in _writes
        version = (self._conn.execute("PRAGMA data_version").fetchone()[0], self._writes)
        hit = self._memo.get(name)
        if hit is None or hit[0] != version:
            hit = self._memo[name] = (version, self._conn.execute(sql).fetchall())
        return hit[1]

    def indexed(self, rels: Iterable[str]) -> set[str]:
        """The paths among `rels` that are in the index."""
        with self._lock:
            rows = self._conn.execute("SELECT rel FROM files WHERE rel IN (SELECT value FROM json_each(?))",
                                      (json.dumps(list(rels)),)).fetchall()
        return {rel for (rel,) in rows}

    def chunks(self, rels: Iterable[str]) -> dict[str, list[Chunk]]:
        """{rel: its chunks} for the indexed files among `rels`."""
        with self._lock:
            rows = self._conn.execute("SELECT rel, chunks FROM files WHERE rel IN (SELECT value FROM json_each(?))",
                                      (json.dumps(list(rels)),)).fetchall()
        return {rel: [Chunk(*item) for item in json.loads(spans)] for rel, spans in rows}


def _delete(conn: sqlite3.Connection, rel: str) -> None:
    row = conn.execute("SELECT id, chunks FROM files WHERE rel = ?", (rel,)).fetchone()
    if row is None:
        return
    file_id, count = row[0], len(json.loads(row[1]))
    conn.execute("DELETE FROM file_terms WHERE term IN (SELECT term FROM file_terms WHERE file = ?) AND file = ?",
                 (file_id, file_id))
    conn.execute("DELETE FROM chunk_fts WHERE rowid >= ? AND rowid < ?", (file_id * CHUNK_SLOTS,
                                                                          file_id * CHUNK_SLOTS + max(count, 1)))
    conn.execute("DELETE FROM files WHERE id = ?", (file_id,))


def _insert(conn: sqlite3.Connection, doc: IndexedFile) -> None:
    spans = json.dumps([[c.start, c.end, c.name, c.parent] for c in doc.chunks], ensure_ascii=False)
    cur = conn.execute("INSERT INTO files (rel, mtime_ns, size, ino, length, n_chunks, chunk_length, chunks) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (doc.rel, *doc.sig, len(doc.file_terms), len(doc.chunk_terms),
                                                           sum(map(len, doc.chunk_terms)), spans))
    file_id = cur.lastrowid
    conn.executemany("INSERT INTO file_terms (term, file, tf) VALUES (?, ?, ?)",
                     ((term, file_id, tf) for term, tf in Counter(doc.file_terms).items()))
    conn.executemany("INSERT INTO chunk_fts (rowid, terms) VALUES (?, ?)",
                     ((file_id * CHUNK_SLOTS + n, " ".join(t)) for n, t in enumerate(doc.chunk_terms)))
