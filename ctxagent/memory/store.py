"""`MemoryStore`: memories in one SQLite file (`<repo>/.ctxagent/memory.db`).

A `ctxagent.storage.sqlite.SQLiteStore` (WAL, busy timeout, one transaction per write,
case S04) with memory.db's migrations (`ctxagent.memory.migrations.MEMORY`). Search lives
in `ctxagent.memory.search`, forget/consolidate/stats in `ctxagent.memory.upkeep`.
Reference: docs/memory-rag.md.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

from ctxagent.errors import NotFoundError, ToolInputError
from ctxagent.memory import fts
from ctxagent.memory.embeddings import Embedder, store_vector
from ctxagent.memory.migrations import MEMORY
from ctxagent.memory.migrations import MEMORY_FTS as FTS_TABLE
from ctxagent.memory.model import (
    DEFAULT_IMPORTANCE,
    MemoryItem,
    check_content,
    check_id,
    check_importance,
    check_modality,
    check_type,
)
from ctxagent.storage.files import LOCK_TIMEOUT_S
from ctxagent.storage.sqlite import SQLiteStore

DEFAULT_USER = "default_user"


def _setup(conn: sqlite3.Connection) -> None:
    """Migrate the schema and rebuild the FTS index if its tokenizer changed."""
    MEMORY.apply(conn)
    fts.ensure_current(conn, FTS_TABLE, "SELECT seq, content FROM memories")


class MemoryStore(SQLiteStore):
    """Memories of user `user_id` in the SQLite file `path` (created with its folder if missing);
    `embedder` (optional, `ctxagent.memory.embeddings`) adds vectors that search blends in.
    A damaged file is set aside with a warning and a new one created; StorageError when the
    file cannot be opened otherwise (a newer ctxagent's schema, a symbolic link, unwritable).
    """

    label = "memory database"
    damaged_hint = "Move it aside to start afresh"

    def __init__(self, path: str | Path, *, user_id: str = DEFAULT_USER, embedder: Embedder | None = None,
                 timeout_s: float = LOCK_TIMEOUT_S) -> None:
        self.user_id = user_id
        self.embedder = embedder
        super().__init__(path, _setup, timeout_s=timeout_s)

    # ------------------------------------------------------------ create, read, update, delete

    def add(self, content: str, memory_type: str = "working", importance: float = DEFAULT_IMPORTANCE, *,
            file_path: str | None = None, modality: str | None = None,
            metadata: dict[str, Any] | None = None, now: float | None = None) -> MemoryItem:
        """Store a memory and return it. Raises ToolInputError on bad content, type or importance."""
        now = time.time() if now is None else now
        item = MemoryItem(id=str(uuid.uuid4()), content=check_content(content),
                          memory_type=check_type(memory_type), importance=check_importance(importance),
                          created_at=now, updated_at=now, user_id=self.user_id, file_path=file_path,
                          modality=check_modality(modality, file_path), metadata=_jsonable(metadata))
        vector = self._embed(item.content)
        with self.write() as conn:
            seq = _insert(conn, item)
            fts.insert(conn, FTS_TABLE, seq, item.content)
            if vector is not None:
                store_vector(conn, seq, self.embedder, vector)
        return item

    def add_many(self, entries: list[dict[str, Any]], *, now: float | None = None) -> list[str]:
        """Store many memories in ONE transaction (all or none); return their ids.

        Each entry: {"content", "memory_type"?, "importance"?, "metadata"?, "created_at"?
        (Unix seconds, for imports)}. Input is checked as in `add`, before anything is written.
        """
        now = time.time() if now is None else now
        items = [MemoryItem(id=str(uuid.uuid4()), content=check_content(e.get("content")),
                            memory_type=check_type(e.get("memory_type", "working")),
                            importance=check_importance(e.get("importance", DEFAULT_IMPORTANCE)),
                            created_at=e.get("created_at", now), updated_at=e.get("created_at", now),
                            user_id=self.user_id, metadata=_jsonable(e.get("metadata")))
                 for e in entries]
        vectors = self.embedder.encode([i.content for i in items]) if self.embedder and items else None
        with self.write() as conn:
            for n, item in enumerate(items):
                seq = _insert(conn, item)
                fts.insert(conn, FTS_TABLE, seq, item.content)
                if vectors is not None:
                    store_vector(conn, seq, self.embedder, vectors[n])
        return [item.id for item in items]

    def get(self, memory_id: str) -> MemoryItem:
        """The memory with this id (or unique id prefix). Raises NotFoundError."""
        with self.read() as conn:
            return MemoryItem.from_row(self._row(conn, memory_id))

    def update(self, memory_id: str, *, content: str | None = None, importance: float | None = None,
               memory_type: str | None = None, metadata: dict[str, Any] | None = None,
               now: float | None = None) -> MemoryItem:
        """Change some fields (metadata keys are merged) and return the memory as stored."""
        changes: dict[str, Any] = {}
        if content is not None:
            changes["content"] = check_content(content)
        if importance is not None:
            changes["importance"] = check_importance(importance)
        if memory_type is not None:
            changes["memory_type"] = check_type(memory_type)
        if not changes and not metadata:
            raise ToolInputError("update needs at least one of: content, importance, memory_type, metadata")
        vector = self._embed(changes["content"]) if "content" in changes else None
        with self.write() as conn:
            row = self._row(conn, memory_id)
            merged = {**json.loads(row["metadata"] or "{}"), **_jsonable(metadata)}
            changes.update(metadata=json.dumps(merged, ensure_ascii=False),
                           updated_at=time.time() if now is None else now)
            sets = ", ".join(f"{key} = ?" for key in changes)
            conn.execute(f"UPDATE memories SET {sets} WHERE seq = ?", [*changes.values(), row["seq"]])
            if "content" in changes:
                fts.upsert(conn, FTS_TABLE, row["seq"], changes["content"])
            if vector is not None:
                store_vector(conn, row["seq"], self.embedder, vector)
            return MemoryItem.from_row(conn.execute("SELECT * FROM memories WHERE seq = ?", (row["seq"],)).fetchone())

    def remove(self, memory_id: str) -> MemoryItem:
        """Delete one memory and return what it was. Raises NotFoundError."""
        with self.write() as conn:
            row = self._row(conn, memory_id)
            delete_seqs(conn, [row["seq"]])
            return MemoryItem.from_row(row)

    def clear(self) -> int:
        """Delete every memory of this user; return how many there were."""
        with self.write() as conn:
            seqs = [r[0] for r in conn.execute("SELECT seq FROM memories WHERE user_id = ?", (self.user_id,))]
            delete_seqs(conn, seqs)
            return len(seqs)

    def count(self) -> int:
        """Number of memories of this user."""
        with self.read() as conn:
            return conn.execute("SELECT count(*) FROM memories WHERE user_id = ?", (self.user_id,)).fetchone()[0]

    def search(self, query: str, *, memory_types: list[str] | None = None, min_importance: float = 0.0,
               limit: int = 5, now: float | None = None,
               exclude_session: str | None = None) -> list[tuple[MemoryItem, float]]:
        """Best matches of `query` as (memory, score), best first; see `ctxagent.memory.search`
        (`exclude_session`: leave out the memories recorded with this metadata `session_id`)."""
        from ctxagent.memory.search import search

        return search(self, query, memory_types=memory_types, min_importance=min_importance,
                      limit=limit, now=now, exclude_session=exclude_session)

    # ------------------------------------------------------------ helpers

    def _row(self, conn: sqlite3.Connection, memory_id: str) -> sqlite3.Row:
        prefix = check_id(memory_id)
        rows = conn.execute("SELECT * FROM memories WHERE id >= ? AND id < ? AND user_id = ? LIMIT 2",
                            (prefix, prefix + "\x7f", self.user_id)).fetchall()
        if not rows:
            raise NotFoundError(f"no memory with id {memory_id!r}; search or summary lists the ids")
        if len(rows) > 1:
            ids = [r[0] for r in conn.execute("SELECT id FROM memories WHERE id >= ? AND id < ? AND user_id = ? "
                                              "ORDER BY id LIMIT 9", (prefix, prefix + "\x7f", self.user_id))]
            shown = ", ".join(ids[:8]) + (" and more" if len(ids) > 8 else "")
            raise ToolInputError(f"memory id prefix {memory_id!r} is ambiguous: it starts {shown}; give more characters")
        return rows[0]

    def _embed(self, text: str) -> list[float] | None:
        return self.embedder.encode([text])[0] if self.embedder is not None else None


def delete_seqs(conn: sqlite3.Connection, seqs: list[int]) -> None:
    """Delete memories (row, full-text entry, vector) by `seq`, inside the caller's transaction."""
    for start in range(0, len(seqs), 500):
        part = seqs[start:start + 500]
        marks = ",".join("?" * len(part))
        conn.execute(f"DELETE FROM {FTS_TABLE} WHERE rowid IN ({marks})", part)
        conn.execute(f"DELETE FROM memories WHERE seq IN ({marks})", part)


def _insert(conn: sqlite3.Connection, item: MemoryItem) -> int:
    cur = conn.execute(
        "INSERT INTO memories (id, user_id, content, memory_type, importance, created_at, updated_at,"
        " file_path, modality, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (item.id, item.user_id, item.content, item.memory_type, item.importance, item.created_at,
         item.updated_at, item.file_path, item.modality, json.dumps(item.metadata, ensure_ascii=False)))
    return int(cur.lastrowid)


def _jsonable(metadata: dict[str, Any] | None) -> dict[str, Any]:
    if not metadata:
        return {}
    if not isinstance(metadata, dict):
        raise ToolInputError("metadata must be an object of keys to values")
    return json.loads(json.dumps(metadata, ensure_ascii=False, default=str))

