"""A memory writer killed with SIGKILL at random points never leaves a corrupt store.

200 runs in all (20 parametrized tests of 10 runs, so pytest-xdist spreads them): each
forks a writer (tests/memory/crash_harness.py), kills it 0-30 ms after it opened the store
(or after it started, one run in five, to hit schema creation), then opens the
store and checks SQLite's and FTS5's integrity checks, that every memory is whole (its
content carries its own SHA-256, its full-text entry exists) and that every memory the
writer finished saving is there in its last saved version. More: benchmarks/crash_memory.py.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from tests.memory.crash_harness import check, crash_once

GROUPS, RUNS_PER_GROUP = 20, 10


@pytest.mark.parametrize("group", range(GROUPS))
def test_memory_store_survives_sigkill_at_random_points(tmp_path: Path, group: int) -> None:
    for run in range(RUNS_PER_GROUP):
        seed = group * RUNS_PER_GROUP + run
        rng = random.Random(seed)
        db, journal = tmp_path / f"{run}" / "memory.db", tmp_path / f"{run}" / "journal.jsonl"
        journal.parent.mkdir()
        # one run in five may die while the schema is being created
        crash_once(db, journal, seed, rng.uniform(0.0, 0.03), after_open=run % 5 != 0)
        assert check(db, journal) == [], f"run {seed}"


def test_checker_catches_a_partial_or_torn_memory(tmp_path: Path) -> None:
    """The checker is not vacuous: an unindexed row and a torn content are reported."""
    db, journal = tmp_path / "memory.db", tmp_path / "journal.jsonl"
    crash_once(db, journal, 7, 0.4)
    assert check(db, journal) == []
    conn = sqlite3.connect(db)
    seq, content = conn.execute("SELECT seq, content FROM memories ORDER BY seq LIMIT 1").fetchone()
    conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
    conn.execute("UPDATE memories SET content = ? WHERE seq = ?", (content[:-5], seq))
    conn.commit()
    conn.close()
    problems = check(db, journal)
    assert any("partial memories" in p for p in problems)
    assert any("torn content" in p for p in problems)
