"""forget (three strategies), consolidate, stats and summary."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ctxagent.errors import ToolInputError
from ctxagent.memory import MemoryStore
from ctxagent.memory.upkeep import consolidate, forget, stats, summary

NOW = time.time()


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    with MemoryStore(tmp_path / "memory.db") as s:
        yield s


def _contents(store: MemoryStore) -> set[str]:
    with store.read() as conn:
        return {r[0] for r in conn.execute("SELECT content FROM memories")}


def test_forget_importance_based_deletes_below_threshold_only(store: MemoryStore) -> None:
    for imp in (0.05, 0.1, 0.2, 0.9):
        store.add(f"imp {imp}", "working", imp)
    assert forget(store, "importance_based", threshold=0.15) == 2
    assert _contents(store) == {"imp 0.2", "imp 0.9"}
    assert store.search("imp", min_importance=0.0, limit=10)  # the index followed the rows


def test_forget_time_based_deletes_older_than_max_age(store: MemoryStore) -> None:
    store.add("ancient", "episodic", 0.9, now=NOW - 40 * 86400)
    store.add("recent", "episodic", 0.1, now=NOW - 2 * 86400)
    assert forget(store, "time_based", max_age_days=30, now=NOW) == 1
    assert _contents(store) == {"recent"}


def test_forget_capacity_based_keeps_the_most_important_then_newest(store: MemoryStore) -> None:
    store.add("low old", "working", 0.2, now=NOW - 10)
    store.add("low new", "working", 0.2, now=NOW)
    store.add("high", "working", 0.9, now=NOW - 100)
    assert forget(store, "capacity_based", max_capacity=2) == 1
    assert _contents(store) == {"high", "low new"}
    assert forget(store, "capacity_based", max_capacity=5) == 0
    assert forget(store, "capacity_based", max_capacity=0) == 2


@pytest.mark.parametrize("kwargs, match", [
    ({"strategy": "lru"}, "importance_based, time_based, capacity_based"),
    ({"strategy": "importance_based", "threshold": 2}, "importance"),
    ({"strategy": "time_based", "max_age_days": -1}, "max_age_days"),
    ({"strategy": "capacity_based", "max_capacity": -3}, "max_capacity"),
    ({"strategy": "capacity_based", "max_capacity": 1.5}, "max_capacity"),
])
def test_forget_refuses_bad_arguments(store: MemoryStore, kwargs: dict, match: str) -> None:
    store.add("keep me", "working", 0.0)
    with pytest.raises(ToolInputError, match=match):
        forget(store, **kwargs)
    assert store.count() == 1


def test_consolidate_promotes_important_working_memories(store: MemoryStore) -> None:
    keep = store.add("minor detail", "working", 0.3)
    promote = store.add("key decision: use SQLite WAL", "working", 0.8, metadata={"k": "v"})
    store.add("already semantic", "semantic", 0.9)
    assert consolidate(store, threshold=0.7) == [promote.id]
    moved = store.get(promote.id)
    assert moved.memory_type == "episodic" and moved.metadata == {"k": "v", "consolidated_from": "working"}
    assert store.get(keep.id).memory_type == "working"
    assert consolidate(store, from_type="episodic", to_type="semantic", threshold=0.8) == [promote.id]


@pytest.mark.parametrize("kwargs, match", [
    ({"from_type": "working", "to_type": "working"}, "different"),
    ({"from_type": "short_term"}, "memory_type"),
    ({"threshold": 1.5}, "importance"),
])
def test_consolidate_refuses_bad_arguments(store: MemoryStore, kwargs: dict, match: str) -> None:
    with pytest.raises(ToolInputError, match=match):
        consolidate(store, **kwargs)


def test_stats_and_summary(store: MemoryStore) -> None:
    empty = stats(store)
    assert empty["total_memories"] == 0 and empty["oldest"] is None
    store.add("a", "working", 0.2, now=NOW - 100)
    store.add("b", "semantic", 0.8, now=NOW)
    info = stats(store)
    assert info["total_memories"] == 2
    assert info["memories_by_type"]["semantic"] == {"count": 1, "avg_importance": 0.8}
    assert info["memories_by_type"]["episodic"]["count"] == 0
    assert info["search_backend"] == "fts5" and info["db_bytes"] > 0
    brief = summary(store, limit=1)
    assert [m["content"] for m in brief["important_memories"]] == ["b"]
    assert [m["content"] for m in brief["recent_memories"]] == ["b"]
