"""Crash harness for the memory store: a writer process is SIGKILLed at a random moment,
then the database is checked.

The writer journals each operation twice (fsynced JSONL): an `intent` line before it
starts and a `done` line after the store returned. Replaying the `done` lines gives
the memories the database must hold; only the operation in flight when the process died
may have happened or not. Every memory's content ends with its own SHA-256, so a torn
row is caught; the full-text index must hold exactly the rows of `memories` (no partial
memory), and SQLite's and FTS5's integrity checks must pass.

Used by `tests/memory/test_crash.py` (200 runs) and `benchmarks/crash_memory.py` (more).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import random
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

from ctxagent.memory import MemoryStore
from ctxagent.memory.upkeep import consolidate, forget
from ctxagent.storage.files import append_jsonl, read_jsonl
from tests.storage.crash_harness import body_ok, digest  # one integrity check for every crash harness

FORGET_BELOW = 0.05


def body(seq: int, rng: random.Random, max_chars: int) -> str:
    """Memory text that proves its own integrity: words, then `sha=` and their SHA-256."""
    words = " ".join(rng.choice(["alpha", "内存", "优化", "beta_gamma", "Pandas", "数据"]) for _ in range(8))
    text = f"seq={seq} {words} " + "x" * rng.randint(0, max_chars)
    return f"{text}\nsha={hashlib.sha256(text.encode()).hexdigest()}"


def writer(db: str, journal: str, seed: int, max_chars: int, ready: Any = None) -> None:
    """Add, update, remove, consolidate and forget memories forever, journaling each step.
    Sets the `ready` event (if any) once the store is open."""
    rng, store, live, seq = random.Random(seed), MemoryStore(db), [], 0
    if ready is not None:
        ready.set()
    while True:
        seq += 1
        op = rng.choice(["add"] * 4 + ["update"] * 3 + ["remove", "consolidate", "forget"]) if live else "add"
        target = rng.choice(live) if op in ("update", "remove") else None
        content, importance = body(seq, rng, max_chars), round(rng.random(), 2)
        append_jsonl(Path(journal), {"intent": op, "id": target})
        if op == "add":
            target = store.add(content, rng.choice(["working", "semantic"]), importance).id
            live.append(target)
        elif op == "update":
            store.update(target, content=content)
        elif op == "remove":
            store.remove(target)
            live.remove(target)
        elif op == "consolidate":
            consolidate(store, threshold=0.5)
        else:
            forget(store, "importance_based", threshold=FORGET_BELOW)
            live[:] = [row["id"] for row in _rows(store)]
        append_jsonl(Path(journal), {"done": op, "id": target, "digest": digest(content), "importance": importance,
                                     "ids": live if op == "forget" else None})


def _rows(store: MemoryStore) -> list[sqlite3.Row]:
    with store.read() as conn:
        return conn.execute("SELECT id FROM memories").fetchall()


def crash_once(db: Path, journal: Path, seed: int, delay_s: float, max_chars: int = 400, *,
               after_open: bool = True) -> None:
    """Fork a writer, SIGKILL it `delay_s` seconds after it opened the store (or after it
    started, when not `after_open`: the kill may then land in schema creation), reap it."""
    ctx = multiprocessing.get_context("fork")
    ready = ctx.Event()
    proc = ctx.Process(target=writer, args=(str(db), str(journal), seed, max_chars, ready), daemon=True)
    proc.start()
    if after_open:
        ready.wait(30)
    time.sleep(delay_s)
    try:
        os.kill(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.join(30)


def check(db: Path, journal: Path) -> list[str]:
    """Problems found after a crash ([] = intact)."""
    if not db.exists():
        return []  # killed before the database was created
    store = MemoryStore(db)
    problems: list[str] = []
    with store.read() as conn:
        if conn.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            problems.append("PRAGMA integrity_check failed")
        try:
            conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
        except sqlite3.DatabaseError as exc:
            problems.append(f"FTS5 integrity-check failed: {exc}")
        rows = {r["id"]: r["content"] for r in conn.execute("SELECT id, content FROM memories")}
        seqs = {r[0] for r in conn.execute("SELECT seq FROM memories")}
        indexed = {r[0] for r in conn.execute("SELECT rowid FROM memories_fts")}
    store.close()
    if seqs != indexed:
        problems.append(f"partial memories: {len(seqs - indexed)} unindexed rows, {len(indexed - seqs)} orphan entries")
    problems += [f"memory {i}: torn content" for i, content in rows.items() if not body_ok(content)]
    return problems + _compare(rows, read_jsonl(journal) if journal.exists() else [])


def _compare(rows: dict[str, str], journal: list[dict[str, Any]]) -> list[str]:
    expected, in_flight = _replay(journal)
    problems = []
    for memory_id, (want, importance) in expected.items():
        if memory_id == in_flight:
            continue
        got = rows.get(memory_id)
        if got is None and not (in_flight == "forget" and importance < FORGET_BELOW):
            problems.append(f"memory {memory_id}: lost")
        elif got is not None and digest(got) != want:
            problems.append(f"memory {memory_id}: not the last saved version")
    extra = set(rows) - set(expected) - {in_flight}
    if len(extra) > (1 if in_flight == "add" else 0):
        problems.append(f"unexpected memories: {sorted(extra)}")
    return problems


def _replay(journal: list[dict[str, Any]]) -> tuple[dict[str, tuple[str, float]], str | None]:
    state: dict[str, tuple[str, float]] = {}
    in_flight: str | None = None
    for line in journal:
        if "intent" in line:
            in_flight = line["id"] if line["intent"] in ("update", "remove") else line["intent"]
            continue
        in_flight = None
        if line["done"] == "remove":
            state.pop(line["id"], None)
        elif line["done"] == "add":
            state[line["id"]] = (line["digest"], line["importance"])
        elif line["done"] == "update":
            state[line["id"]] = (line["digest"], state[line["id"]][1])
        elif line["done"] == "forget":
            state = {k: v for k, v in state.items() if k in set(line["ids"])}
    return state, in_flight
