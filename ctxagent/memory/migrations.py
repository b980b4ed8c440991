"""memory.db's schema: its numbered migrations (`MEMORY`; the runner is `ctxagent.storage.migrations`)."""

from __future__ import annotations

import sqlite3

from ctxagent.storage.migrations import Migrations

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
