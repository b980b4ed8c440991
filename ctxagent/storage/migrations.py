"""Numbered schema migrations for ctxagent's SQLite databases (memory.db, the knowledge base).

`m001_initial(conn)`, `m002_...(conn)` register on a `Migrations` list; `apply` runs the
missing ones under `BEGIN IMMEDIATE` and records them in `_migrations` (simonw/llm's
scheme). Reference: docs/memory-rag.md ("Storage, concurrency and crashes").
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
