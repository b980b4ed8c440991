"""S04: concurrent sessions share one memory database.

Real threads and real processes: 8 threads (and, separately, 8 processes) open the store
on a NEW file at the same moment, racing to create the schema; one process holds a read
transaction in a loop while another inserts 200 memories. Required: no "database is
locked" (or any other error) reaches a caller, all 200 rows are there, and the schema
was created exactly once (each migration recorded once).
"""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ctxagent.memory import MemoryStore
from ctxagent.memory.migrations import MEMORY
from ctxagent.storage.migrations import applied
from ctxagent.storage.sqlite import connect_sqlite
from ctxagent.tools import MemoryTool

_ctx = multiprocessing.get_context("fork")


def _migration_rows(db: Path) -> list[tuple[str]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT name FROM _migrations ORDER BY name").fetchall()
    finally:
        conn.close()


def test_S04_eight_threads_create_the_schema_on_a_new_file_at_once(tmp_path: Path) -> None:
    db = tmp_path / "new" / "memory.db"
    barrier, errors, ids = threading.Barrier(8), [], []

    def session(n: int) -> None:
        try:
            barrier.wait()
            store = MemoryStore(db)
            for i in range(25):
                ids.append(store.add(f"thread {n} memory {i} 内存", "episodic", 0.5).id)
            store.close()
        except Exception as exc:  # collected: any error fails the test below
            errors.append(repr(exc))

    threads = [threading.Thread(target=session, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert _migration_rows(db) == [(name,) for name in MEMORY.names()]
    assert MemoryStore(db).count() == 200 == len(set(ids))


def _open_and_add(db: str, start: Any, results: Any, n: int) -> None:
    try:
        start.wait(30)
        tool = MemoryTool(db_path=db)
        tool.run({"action": "add", "content": f"process {n} was here", "memory_type": "episodic"})
        results.put(("ok", n))
    except Exception as exc:
        results.put(("error", repr(exc)))


def test_S04_eight_processes_create_the_schema_on_a_new_file_at_once(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    start, results = _ctx.Event(), _ctx.Queue()
    procs = [_ctx.Process(target=_open_and_add, args=(str(db), start, results, n)) for n in range(8)]
    for p in procs:
        p.start()
    time.sleep(0.2)  # all eight are waiting at the start line
    start.set()
    outcomes = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(30)
    assert sorted(outcomes) == [("ok", n) for n in range(8)]
    assert _migration_rows(db) == [(name,) for name in MEMORY.names()]
    assert MemoryStore(db).count() == 8


def _hold_reads(db: str, ready: Any, stop: Any, results: Any) -> None:
    """Loop: open a read transaction, read, keep it open ~20 ms, end it."""
    try:
        conn = connect_sqlite(Path(db))
        conn.isolation_level = None
        rounds = 0
        while not stop.is_set():
            conn.execute("BEGIN")
            conn.execute("SELECT count(*), max(importance) FROM memories").fetchone()
            ready.set()
            time.sleep(0.02)
            conn.execute("COMMIT")
            rounds += 1
        results.put(("reader", rounds))
    except Exception as exc:
        results.put(("reader error", repr(exc)))


def _insert_200(db: str, results: Any) -> None:
    try:
        tool = MemoryTool(db_path=db)
        for i in range(200):
            tool.run({"action": "add", "content": f"memory {i}: Pandas内存优化 step {i}", "importance": 0.6})
        results.put(("writer", 200))
    except Exception as exc:
        results.put(("writer error", repr(exc)))


def test_S04_writer_inserts_200_while_another_process_holds_read_transactions(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    MemoryStore(db).close()  # the reader needs the table to exist
    ready, stop, results = _ctx.Event(), _ctx.Event(), _ctx.Queue()
    reader = _ctx.Process(target=_hold_reads, args=(str(db), ready, stop, results))
    reader.start()
    assert ready.wait(30)
    writer = _ctx.Process(target=_insert_200, args=(str(db), results))
    writer.start()
    writer.join(120)
    stop.set()
    reader.join(30)
    outcomes = dict(results.get(timeout=10) for _ in range(2))
    assert outcomes.get("writer") == 200, outcomes
    assert outcomes.get("reader", 0) > 0, outcomes
    store = MemoryStore(db)
    assert store.count() == 200
    assert len(store.search("内存优化", limit=100, min_importance=0.0)) == 100


def test_S04_schema_creation_is_idempotent(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    for _ in range(3):
        MemoryStore(db).close()
    conn = connect_sqlite(db)
    conn.isolation_level = None
    assert MEMORY.apply(conn) == []
    assert applied(conn) == MEMORY.names()
