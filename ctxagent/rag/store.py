"""`KnowledgeBase`: documents cut into chunks, indexed for full-text search in SQLite.

A `ctxagent.storage.sqlite.SQLiteStore` (migrations `RAG`) with the FTS5 index of
`ctxagent.memory.fts`; a document, known by key within a namespace, is replaced in one
transaction unless its hash is unchanged. Scores are relative to the best (docs/memory-rag.md).
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from ctxagent.memory import fts
from ctxagent.rag.chunking import Chunk
from ctxagent.redaction import redact
from ctxagent.storage.files import LOCK_TIMEOUT_S
from ctxagent.storage.migrations import Migrations
from ctxagent.storage.sqlite import SQLiteStore

RAG = Migrations("rag")
FTS_TABLE = "chunks_fts"
CANDIDATES = 200
MIN_ROWS_TO_FOCUS = 2000
POSTINGS_BUDGET = 10_000  # as in ctxagent.memory.search


@RAG
def m001_initial(conn: sqlite3.Connection) -> None:
    """Documents, their chunks (with line/page positions) and the chunks' FTS index."""
    conn.execute("""
        CREATE TABLE documents (
            id INTEGER PRIMARY KEY,
            namespace TEXT NOT NULL,
            doc_key TEXT NOT NULL,
            source TEXT NOT NULL,
            title TEXT NOT NULL,
            kind TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            chunk_count INTEGER NOT NULL,
            added_at REAL NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}',
            UNIQUE (namespace, doc_key)
        )""")
    conn.execute("""
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            document INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
            chunk_index INTEGER NOT NULL,
            content TEXT NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            page INTEGER,
            heading TEXT,
            tokens INTEGER NOT NULL
        )""")
    conn.execute("CREATE INDEX chunks_document ON chunks (document, chunk_index)")
    fts.create_fts_table(conn, FTS_TABLE)


@RAG
def m002_fts_state(conn: sqlite3.Connection) -> None:
    """Which tokenizer built the FTS index (`ctxagent.memory.fts.ensure_current`)."""
    conn.execute(fts.STATE_SQL)


def _setup(conn: sqlite3.Connection) -> None:
    """Migrate the schema and rebuild the FTS index if its tokenizer changed."""
    RAG.apply(conn)
    fts.ensure_current(conn, FTS_TABLE, "SELECT c.id, d.title, coalesce(c.heading, ''), c.content"
                       " FROM chunks c JOIN documents d ON d.id = c.document")


class KnowledgeBase(SQLiteStore):
    """The knowledge base in SQLite file `path`, seen through `namespace`. A damaged file is
    set aside with a warning and a new, empty one created (add the documents again);
    StorageError when the file cannot be opened otherwise (`ctxagent.storage.sqlite`).
    """

    label = "knowledge base"
    damaged_hint = "Move it aside and add the documents again"

    def __init__(self, path: str | Path, *, namespace: str = "default", timeout_s: float = LOCK_TIMEOUT_S) -> None:
        self.namespace = namespace
        super().__init__(path, _setup, timeout_s=timeout_s)

    def put(self, key: str, *, source: str, title: str, kind: str, content_hash: str, chunks: list[Chunk],
            metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        """Store a document's chunks, replacing an older version with the same key.

        Returns {document_id, source, title, kind, chunks, replaced, unchanged, content_hash}.
        """
        out = {"document_id": key, "source": source, "title": title, "kind": kind, "chunks": len(chunks),
               "content_hash": content_hash, "replaced": False, "unchanged": False}
        with self.write() as conn:
            old = conn.execute("SELECT id, content_hash, chunk_count FROM documents WHERE namespace = ? AND doc_key = ?",
                               (self.namespace, key)).fetchone()
            if old is not None and old["content_hash"] == content_hash:
                return {**out, "chunks": old["chunk_count"], "unchanged": True}
            if old is not None:
                _delete_documents(conn, [old["id"]])
                out["replaced"] = True
            doc_id = conn.execute(
                "INSERT INTO documents (namespace, doc_key, source, title, kind, content_hash, chunk_count, added_at,"
                " metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (self.namespace, key, source, title, kind, content_hash, len(chunks), time.time(),
                 json.dumps(metadata or {}, ensure_ascii=False, default=str))).lastrowid
            for chunk in chunks:
                _insert_chunk(conn, doc_id, chunk, title)
        return out

    def search(self, query: str, *, limit: int = 5, min_score: float = 0.0) -> list[dict[str, Any]]:
        """Best chunks for `query`, best first: dicts with source, document_id, title, kind,
        chunk_index, start_line, end_line, page, heading, score (0..1], content, citation."""
        terms = fts.query_terms(query or "")
        if not terms:
            return []
        with self.read() as conn:
            total = conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0  # O(1); >= the row count
            if len(terms) > 1 and total >= MIN_ROWS_TO_FOCUS:
                terms = fts.focus_terms(terms, fts.doc_frequencies(conn, FTS_TABLE, terms), budget=POSTINGS_BUDGET)
            rows = conn.execute(
                f"SELECT c.*, d.doc_key, d.source, d.title, d.kind, bm25({FTS_TABLE}) AS bm FROM {FTS_TABLE}"
                f" JOIN chunks c ON c.id = {FTS_TABLE}.rowid JOIN documents d ON d.id = c.document"
                f" WHERE {FTS_TABLE} MATCH ? AND d.namespace = ? ORDER BY bm LIMIT ?",
                (fts.match_expression(terms), self.namespace, max(CANDIDATES, limit))).fetchall()
        scores = fts.relevance([r["bm"] for r in rows])
        hits = [_hit(row, score) for row, score in zip(rows, scores) if score >= min_score]
        return hits[:limit]

    def documents(self) -> list[dict[str, Any]]:
        """Every document of the namespace: {document_id, source, title, kind, chunks, added_at}."""
        with self.read() as conn:
            rows = conn.execute("SELECT * FROM documents WHERE namespace = ? ORDER BY added_at, id",
                                (self.namespace,)).fetchall()
        return [{"document_id": r["doc_key"], "source": r["source"], "title": r["title"], "kind": r["kind"],
                 "chunks": r["chunk_count"], "added_at": r["added_at"]} for r in rows]

    def clear(self) -> int:
        """Delete every document of the namespace; return how many there were."""
        with self.write() as conn:
            ids = [r[0] for r in conn.execute("SELECT id FROM documents WHERE namespace = ?", (self.namespace,))]
            _delete_documents(conn, ids)
        return len(ids)

    def db_bytes(self) -> int:
        files = [self.path, self.path.with_name(self.path.name + "-wal")]
        return sum(f.stat().st_size for f in files if f.exists())


def _insert_chunk(conn: sqlite3.Connection, doc_id: int, chunk: Chunk, title: str) -> None:
    """Store one chunk and its index terms, API-key-shaped strings replaced first
    (`ctxagent.redaction`): a document read from a file may hold one, and the knowledge
    base is stored state."""
    content, heading = redact(chunk.content), redact(chunk.heading)
    rowid = conn.execute(
        "INSERT INTO chunks (document, chunk_index, content, start_line, end_line, page, heading, tokens)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (doc_id, chunk.index, content, chunk.start_line, chunk.end_line, chunk.page, heading,
         chunk.tokens)).lastrowid
    conn.execute(f"INSERT INTO {FTS_TABLE} (rowid, terms) VALUES (?, ?)",
                 (rowid, fts.index_text(title, heading or "", content)))


def _delete_documents(conn: sqlite3.Connection, doc_ids: list[int]) -> None:
    for doc_id in doc_ids:
        conn.execute(f"DELETE FROM {FTS_TABLE} WHERE rowid IN (SELECT id FROM chunks WHERE document = ?)", (doc_id,))
        conn.execute("DELETE FROM chunks WHERE document = ?", (doc_id,))
        conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))


def _hit(row: sqlite3.Row, score: float) -> dict[str, Any]:
    where = f"p.{row['page']} " if row["page"] is not None else ""
    lines = (f"lines {row['start_line']}-{row['end_line']}" if row["end_line"] != row["start_line"]
             else f"line {row['start_line']}")
    return {"source": row["source"], "document_id": row["doc_key"], "title": row["title"], "kind": row["kind"],
            "chunk_index": row["chunk_index"], "start_line": row["start_line"], "end_line": row["end_line"],
            "page": row["page"], "heading": row["heading"], "score": round(score, 4), "content": row["content"],
            "citation": f"{row['source']} {where}{lines}"}

