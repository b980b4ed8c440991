"""Numbered migrations: applied in order, recorded once, idempotent, atomic."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ctxagent.errors import StorageError
from ctxagent.memory import MemoryStore
from ctxagent.memory.migrations import MEMORY
from ctxagent.storage.migrations import Migrations, applied
from ctxagent.storage.sqlite import connect_sqlite


def _conn(path: Path) -> sqlite3.Connection:
    conn = connect_sqlite(path)
    conn.isolation_level = None
    return conn


def test_memory_migrations_are_numbered_and_ordered() -> None:
    assert MEMORY.names() == ["m001_initial", "m002_vectors", "m003_fts_state"]


def test_new_database_gets_every_migration_once_and_reopening_applies_nothing(tmp_path: Path) -> None:
    conn = _conn(tmp_path / "m.db")
    assert MEMORY.apply(conn) == MEMORY.names()
    assert MEMORY.apply(conn) == []
    assert applied(conn) == MEMORY.names()
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"memories", "memories_fts", "memory_vectors", "_migrations"} <= tables


def test_only_missing_migrations_run_in_order(tmp_path: Path) -> None:
    steps, ran = Migrations("demo"), []

    @steps
    def m002_second(conn: sqlite3.Connection) -> None:
        ran.append("m002")

    @steps
    def m001_first(conn: sqlite3.Connection) -> None:
        ran.append("m001")

    conn = _conn(tmp_path / "d.db")
    assert steps.apply(conn) == ["m001_first", "m002_second"]
    assert ran == ["m001", "m002"]

    @steps
    def m003_third(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE third (x)")

    assert steps.apply(conn) == ["m003_third"]
    assert ran == ["m001", "m002"]


def test_a_failing_migration_leaves_nothing_behind(tmp_path: Path) -> None:
    steps = Migrations("demo")

    @steps
    def m001_ok(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE ok (x)")

    @steps
    def m002_broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half (x)")
        raise RuntimeError("boom")

    conn = _conn(tmp_path / "d.db")
    with pytest.raises(RuntimeError):
        steps.apply(conn)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "ok" not in names and "half" not in names
    assert applied(conn) == []


@pytest.mark.parametrize("name", ["initial", "m1_short", "m001-dash", "M001_upper"])
def test_badly_named_migrations_are_refused(name: str) -> None:
    steps = Migrations("demo")

    def func(conn: sqlite3.Connection) -> None:
        pass

    func.__name__ = name
    with pytest.raises(ValueError):
        steps(func)


def test_database_from_a_newer_version_is_refused_clearly(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    MemoryStore(db).close()
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO _migrations VALUES ('m099_future', 0)")
    conn.commit()
    conn.close()
    with pytest.raises(StorageError, match="m099_future"):
        MemoryStore(db)


def test_F10_a_file_that_is_not_a_database_is_set_aside_not_overwritten(tmp_path: Path) -> None:
    """Breaker F10 changed "refuse" into "recover": the damaged bytes are never
    overwritten, they are moved aside whole and reported; a new database replaces them."""
    db = tmp_path / "memory.db"
    db.write_bytes(b"this is not sqlite" * 100)
    with pytest.warns(UserWarning, match=r"damaged.*memory\.db\.corrupt-"):
        MemoryStore(db).close()
    [aside] = tmp_path.glob("memory.db.corrupt-*")
    assert aside.read_bytes() == b"this is not sqlite" * 100
    assert applied(connect_sqlite(db)) == MEMORY.names()
