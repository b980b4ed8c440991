"""Numbered schema migrations for ctxagent's SQLite databases (STYLE.md habit 13).

A migration is a plain function `m001_initial(conn)`, `m002_...(conn)`, registered on a
`Migrations` list with its decorator. `Migrations.apply(conn)` runs the missing ones in
name order and records each in the `_migrations` table (name, applied_at), the scheme of
simonw/llm's `migrations.py`. Several processes or threads may open a new database at the
same moment (case S04): the check-and-apply runs inside `BEGIN IMMEDIATE`, which takes
SQLite's write lock first (waiting up to the busy timeout), so exactly one opener applies
each migration and the others find it recorded. A migration that fails rolls back whole.
"""

from __future__ import annotations

import re
import sqlite3
import time
from typing import Callable

from ctxagent.errors import StorageError

Migration = Callable[[sqlite3.Connection], None]
_NAME_RE = re.compile(r"^m\d{3}_[a-z0-9_]+$")

_TABLE_SQL = "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"


class Migrations:
    """An ordered list of migrations for one database kind (`label`, e.g. "memory")."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.steps: dict[str, Migration] = {}

    def __call__(self, func: Migration) -> Migration:
        """Decorator: register `func`, whose name must look like `m001_initial`."""
        name = func.__name__
        if not _NAME_RE.match(name) or name in self.steps:
            raise ValueError(f"bad or duplicate migration name {name!r} (want m001_description)")
        self.steps[name] = func
        return func

    def names(self) -> list[str]:
        """Registered migration names in the order they apply."""
        return sorted(self.steps)

    def apply(self, conn: sqlite3.Connection) -> list[str]:
        """Apply the missing migrations; return the names this call applied ([] if none).

        `conn` must be in autocommit mode (`isolation_level = None`). Raises StorageError
        if the database was written by a newer ctxagent (it has migrations we do not know).
        """
        if not self._pending(conn, locked=False):
            return []
        conn.execute("BEGIN IMMEDIATE")
        try:
            pending = self._pending(conn, locked=True)
            for name in pending:
                self.steps[name](conn)
                conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (name, time.time()))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return pending

    def _pending(self, conn: sqlite3.Connection, *, locked: bool) -> list[str]:
        if locked:
            conn.execute(_TABLE_SQL)
        elif not conn.execute("SELECT 1 FROM sqlite_master WHERE name = '_migrations'").fetchone():
            return self.names()
        done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
        unknown = done - set(self.steps)
        if unknown:
            raise StorageError(f"the {self.label} database has migrations this ctxagent does not know "
                               f"({', '.join(sorted(unknown))}); upgrade ctxagent to open it")
        return [name for name in self.names() if name not in done]


def applied(conn: sqlite3.Connection) -> list[str]:
    """Names recorded in `_migrations`, in order ([] for a database never migrated)."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = '_migrations'").fetchone():
        return []
    return [row[0] for row in conn.execute("SELECT name FROM _migrations ORDER BY name")]


# ---------------------------------------------------------------- memory.db schema

MEMORY = Migrations("memory")
MEMORY_FTS = "memories_fts"


@MEMORY
def m001_initial(conn: sqlite3.Connection) -> None:
    """Memories, their full-text index (pre-tokenized terms, see `ctxagent.memory.fts`)."""
    from ctxagent.memory.fts import create_fts_table

    conn.execute("""
        CREATE TABLE memories (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL,
            content TEXT NOT NULL,
            memory_type TEXT NOT NULL
                CHECK (memory_type IN ('working', 'episodic', 'semantic', 'perceptual')),
            importance REAL NOT NULL CHECK (importance >= 0 AND importance <= 1),
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            file_path TEXT,
            modality TEXT,
            metadata TEXT NOT NULL DEFAULT '{}'
        )""")
    conn.execute("CREATE INDEX memories_user_type ON memories (user_id, memory_type, importance)")
    conn.execute("CREATE INDEX memories_user_created ON memories (user_id, created_at)")
    create_fts_table(conn, MEMORY_FTS)


@MEMORY
def m002_vectors(conn: sqlite3.Connection) -> None:
    """Optional embeddings (only filled when a local embedding model is installed)."""
    conn.execute("""
        CREATE TABLE memory_vectors (
            seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
            model TEXT NOT NULL,
            vector BLOB NOT NULL
        )""")


@MEMORY
def m003_fts_state(conn: sqlite3.Connection) -> None:
    """Which tokenizer built each FTS index (`ctxagent.memory.fts.ensure_current`)."""
    from ctxagent.memory.fts import STATE_SQL

    conn.execute(STATE_SQL)
