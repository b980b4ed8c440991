"""Memory upkeep: forget, consolidate, stats and summary (Hello-Agents textbook, 8.2.3).

forget by importance, age or capacity; consolidate one type into another. Each runs in
one transaction (docs/memory-rag.md, "Module notes").
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from ctxagent.errors import ToolInputError
from ctxagent.memory.model import MEMORY_TYPES, MemoryItem, check_importance, check_type, iso
from ctxagent.memory.store import delete_seqs

if TYPE_CHECKING:
    from ctxagent.memory.store import MemoryStore

FORGET_STRATEGIES = ("importance_based", "time_based", "capacity_based")


def forget(store: "MemoryStore", strategy: str = "importance_based", *, threshold: float = 0.1,
           max_age_days: float = 30.0, max_capacity: int = 10_000, now: float | None = None) -> int:
    """Delete memories by `strategy` (module doc); return how many were deleted.

    Raises ToolInputError for an unknown strategy or a bad threshold, age or capacity.
    """
    now = time.time() if now is None else now
    if strategy == "importance_based":
        sql, params = "importance < ?", [check_importance(threshold)]
    elif strategy == "time_based":
        if not isinstance(max_age_days, (int, float)) or max_age_days < 0:
            raise ToolInputError(f"max_age_days must be a number of days >= 0, got {max_age_days!r}")
        sql, params = "created_at < ?", [now - float(max_age_days) * 86400.0]
    elif strategy == "capacity_based":
        if isinstance(max_capacity, bool) or not isinstance(max_capacity, int) or max_capacity < 0:
            raise ToolInputError(f"max_capacity must be a whole number >= 0, got {max_capacity!r}")
        sql = ("seq NOT IN (SELECT seq FROM memories WHERE user_id = ? "
               "ORDER BY importance DESC, created_at DESC, seq DESC LIMIT ?)")
        params = [store.user_id, max_capacity]
    else:
        raise ToolInputError(f"unknown forget strategy {strategy!r}; use one of: {', '.join(FORGET_STRATEGIES)}")
    with store.write() as conn:
        seqs = [r[0] for r in conn.execute(f"SELECT seq FROM memories WHERE user_id = ? AND {sql}",
                                           [store.user_id, *params])]
        delete_seqs(conn, seqs)
    return len(seqs)


def consolidate(store: "MemoryStore", *, from_type: str = "working", to_type: str = "episodic",
                threshold: float = 0.7, now: float | None = None) -> list[str]:
    """Promote important `from_type` memories to `to_type`; return the ids promoted."""
    check_type(from_type)
    check_type(to_type)
    if from_type == to_type:
        raise ToolInputError(f"from_type and to_type are both {from_type!r}; consolidate moves memories "
                             "between two different types")
    threshold = check_importance(threshold)
    now = time.time() if now is None else now
    with store.write() as conn:
        rows = conn.execute("SELECT seq, id, metadata FROM memories WHERE user_id = ? AND memory_type = ? "
                            "AND importance >= ? ORDER BY seq", (store.user_id, from_type, threshold)).fetchall()
        for row in rows:
            meta = {**json.loads(row["metadata"] or "{}"), "consolidated_from": from_type}
            conn.execute("UPDATE memories SET memory_type = ?, metadata = ?, updated_at = ? WHERE seq = ?",
                         (to_type, json.dumps(meta, ensure_ascii=False), now, row["seq"]))
    return [row["id"] for row in rows]


def stats(store: "MemoryStore", enabled_types: tuple[str, ...] = MEMORY_TYPES) -> dict[str, Any]:
    """{total_memories, memories_by_type: {type: {count, avg_importance}}, enabled_types,
    oldest, newest (ISO or None), db_path, db_bytes, search_backend}."""
    with store.read() as conn:
        rows = conn.execute("SELECT memory_type, count(*) AS n, avg(importance) AS imp, min(created_at) AS lo,"
                            " max(created_at) AS hi FROM memories WHERE user_id = ? GROUP BY memory_type",
                            (store.user_id,)).fetchall()
    by_type = {t: {"count": 0, "avg_importance": 0.0} for t in enabled_types}
    for r in rows:
        by_type[r["memory_type"]] = {"count": r["n"], "avg_importance": round(r["imp"], 4)}
    lows, highs = [r["lo"] for r in rows], [r["hi"] for r in rows]
    files = [store.path, store.path.with_name(store.path.name + "-wal")]
    return {
        "total_memories": sum(r["n"] for r in rows), "memories_by_type": by_type,
        "enabled_types": list(enabled_types), "user_id": store.user_id,
        "oldest": iso(min(lows)) if lows else None, "newest": iso(max(highs)) if highs else None,
        "db_path": str(store.path), "db_bytes": sum(f.stat().st_size for f in files if f.exists()),
        "search_backend": "fts5+embeddings" if store.embedder is not None else "fts5",
    }


def summary(store: "MemoryStore", limit: int = 5, enabled_types: tuple[str, ...] = MEMORY_TYPES) -> dict[str, Any]:
    """{total_memories, memories_by_type, important_memories (top `limit` by importance),
    recent_memories (newest `limit`)}; memories as `MemoryItem.to_dict()`."""
    info = stats(store, enabled_types)
    with store.read() as conn:
        top = conn.execute("SELECT * FROM memories WHERE user_id = ? ORDER BY importance DESC, created_at DESC "
                           "LIMIT ?", (store.user_id, limit)).fetchall()
        recent = conn.execute("SELECT * FROM memories WHERE user_id = ? ORDER BY created_at DESC, seq DESC "
                              "LIMIT ?", (store.user_id, limit)).fetchall()
    return {
        "total_memories": info["total_memories"], "memories_by_type": info["memories_by_type"],
        "important_memories": [MemoryItem.from_row(r).to_dict() for r in top],
        "recent_memories": [MemoryItem.from_row(r).to_dict() for r in recent],
    }
