"""Damaged SQLite stores recover like the JSON ones (breaker F10), for memory.db and the
knowledge base: garbage bytes and truncated copies are moved aside (with -wal/-shm) and
a new database is created with one warning; a database of a newer ctxagent is refused
and left untouched; a healthy database is never moved."""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path
from typing import Callable

import pytest

from ctxagent.errors import StorageError
from ctxagent.memory import MemoryStore
from ctxagent.rag.store import KnowledgeBase
from ctxagent.storage.sqlite import is_damaged, set_aside_sqlite


def open_memory(path: Path) -> MemoryStore:
    return MemoryStore(path, embedder=None)


STORES: dict[str, Callable[[Path], object]] = {"memory": open_memory, "rag": KnowledgeBase}


def filled(path: Path, kind: str) -> bytes:
    store = STORES[kind](path)
    if kind == "memory":
        store.add_many([{"content": f"fact number {i} about pandas memory use " * 6} for i in range(200)])
    else:
        from ctxagent.rag.chunking import Chunk
        chunks = [Chunk(index=i, content=f"chunk {i} about pandas " * 20, start_line=i, end_line=i, tokens=40)
                  for i in range(200)]
        store.put("doc", source="doc.md", title="doc", kind="markdown", content_hash="h", chunks=chunks)
    store.close()
    return path.read_bytes()


def open_quietly(kind: str, path: Path) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store = STORES[kind](path)
    return store, [str(w.message) for w in caught]


def asides(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".corrupt-*"))


@pytest.mark.parametrize("kind", sorted(STORES))
@pytest.mark.parametrize("damage", ["garbage", "truncated_half", "truncated_tenth", "zeroed_header"])
def test_F10_damaged_database_is_set_aside_and_recreated_with_one_warning(tmp_path: Path, kind: str,
                                                                          damage: str) -> None:
    path = tmp_path / "store.db"
    good = filled(tmp_path / "good.db", kind)
    bad = {"garbage": b"garbage\n", "truncated_half": good[: len(good) // 2],
           "truncated_tenth": good[: len(good) // 10], "zeroed_header": b"\0" * 100 + good[100:]}[damage]
    path.write_bytes(bad)
    store, messages = open_quietly(kind, path)
    assert len(messages) == 1 and "damaged" in messages[0] and "corrupt-" in messages[0]
    [aside] = asides(path)
    assert aside.read_bytes() == bad and aside.name in messages[0]
    store.close()
    store, messages = open_quietly(kind, path)  # the new database is healthy: no second warning
    assert messages == [] and asides(path) == [aside]
    store.close()


def test_F10_wal_and_shm_files_move_aside_with_the_database(tmp_path: Path) -> None:
    """(SQLite itself drops a -wal whose header is invalid when the first open fails, so the
    move is checked on `set_aside_sqlite`, which `open_sqlite` calls.)"""
    path = tmp_path / "store.db"
    path.write_bytes(b"not a database at all" * 50)
    for suffix in ("-wal", "-shm", "-journal"):
        (tmp_path / f"store.db{suffix}").write_bytes(suffix.encode() * 10)
    aside = set_aside_sqlite(path)
    assert aside.name.startswith("store.db.corrupt-") and aside.read_bytes() == b"not a database at all" * 50
    for suffix in ("-wal", "-shm", "-journal"):
        assert (tmp_path / f"{aside.name}{suffix}").read_bytes() == suffix.encode() * 10
        assert not (tmp_path / f"store.db{suffix}").exists()


@pytest.mark.parametrize("kind", sorted(STORES))
def test_F10_a_database_of_a_newer_ctxagent_is_refused_not_set_aside(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "store.db"
    filled(path, kind)
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO _migrations VALUES ('m099_future', 0)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StorageError, match="m099_future.*upgrade ctxagent"):
        STORES[kind](path)
    assert path.read_bytes() == before and asides(path) == []


@pytest.mark.parametrize("kind", sorted(STORES))
def test_F10_a_healthy_or_empty_database_is_never_moved(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "store.db"
    filled(path, kind)
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    for target in (path, empty):
        store, messages = open_quietly(kind, target)
        store.close()
        assert messages == [] and asides(target) == []


def test_F10_an_unopenable_location_is_a_storage_error_not_a_recovery(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    with pytest.raises(StorageError):
        open_memory(tmp_path / "afile" / "memory.db")
    assert (tmp_path / "afile").read_text() == "x"


def test_is_damaged_tells_corruption_from_other_errors(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    path.write_bytes(b"garbage\n" * 100)
    with pytest.raises(sqlite3.DatabaseError) as caught:
        sqlite3.connect(path).execute("PRAGMA journal_mode = WAL")
    assert is_damaged(caught.value)
    assert not is_damaged(sqlite3.OperationalError("database is locked"))


def test_set_aside_sqlite_names_never_collide(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    moved = []
    for n in range(3):
        path.write_bytes(bytes([n]))
        moved.append(set_aside_sqlite(path))
    assert len(set(moved)) == 3 and not path.exists()
