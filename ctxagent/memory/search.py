"""Memory search: FTS5 candidates ranked by relevance, recency and importance.

score = (0.8 * relevance + 0.2 * recency) * (0.8 + 0.4 * importance), textbook 8.2.5;
recency halves in 7 days. Only the rarest terms (POSTINGS_BUDGET rows) and the best
CANDIDATES rows are ranked in Python (docs/memory-rag.md, "How search works").
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ctxagent.memory import fts
from ctxagent.memory.embeddings import cosine_top
from ctxagent.memory.migrations import MEMORY_FTS as FTS
from ctxagent.memory.model import MemoryItem, check_importance, check_type
from ctxagent.text.scoring import recency_score

if TYPE_CHECKING:
    from ctxagent.memory.store import MemoryStore

HALF_LIFE_S = 7 * 86400.0
POSTINGS_BUDGET = 10_000  # matching rows FTS5 may score per query (see fts.focus_terms)
CANDIDATES = 200  # rows re-ranked in Python
POOL = 400  # rows taken from the FTS index before filtering
MIN_ROWS_TO_FOCUS = 2000  # below this, scoring every match is fast anyway


def combined_score(relevance: float, importance: float, created_at: float, now: float) -> float:
    """The textbook's blend (module doc); in [0, 1.2]."""
    recency = recency_score(created_at, now=now, half_life_s=HALF_LIFE_S)
    return (0.8 * relevance + 0.2 * recency) * (0.8 + 0.4 * importance)


def search(store: "MemoryStore", query: str, *, memory_types: list[str] | None = None,
           min_importance: float = 0.0, limit: int = 5, now: float | None = None,
           exclude_session: str | None = None) -> list[tuple[MemoryItem, float]]:
    """Up to `limit` (memory, score) pairs of `store`'s user, best first; `memory_types` (None:
    all), `min_importance`, `exclude_session` (memories with that metadata `session_id` are
    left out in SQL). Raises ToolInputError on an unknown type or bad number."""
    now = time.time() if now is None else now
    where, params = _filters(store.user_id, memory_types, min_importance, exclude_session)
    if not query or not query.strip():
        return _by_importance(store, where, params, limit, now)
    terms = fts.query_terms(query)
    if not terms:
        return []
    with store.read() as conn:
        expr = fts.match_expression(_focus(conn, terms))
        rows, relevance = _candidates(conn, expr, where, params, limit)
        if store.embedder is not None:
            rows, relevance = _blend_vectors(store, conn, query, rows, relevance, where, params, limit)
    scored = [(combined_score(relevance[r["seq"]], r["importance"], r["created_at"], now), r) for r in rows]
    scored.sort(key=lambda pair: (-pair[0], -pair[1]["created_at"]))
    return [(MemoryItem.from_row(r), score) for score, r in scored[:limit]]


def _filters(user_id: str, memory_types: list[str] | None, min_importance: float,
             exclude_session: str | None = None) -> tuple[str, list]:
    clauses, params = ["m.user_id = ?"], [user_id]
    if memory_types:
        types = [check_type(t) for t in memory_types]
        clauses.append(f"m.memory_type IN ({','.join('?' * len(types))})")
        params.extend(types)
    if min_importance:
        clauses.append("m.importance >= ?")
        params.append(check_importance(min_importance))
    if exclude_session:  # CASE: json_extract is only reached on valid JSON, so a damaged row cannot fail the query
        clauses.append("(CASE WHEN json_valid(m.metadata) THEN json_extract(m.metadata, '$.session_id') END) IS NOT ?")
        params.append(str(exclude_session))
    return " AND ".join(clauses), params


def _candidates(conn, expr: str, where: str, params: list, limit: int) -> tuple[list, dict[int, float]]:
    """The best rows by bm25 that pass the filters, and their relevance {seq: 0..1}.

    First the FTS index alone (no join: about twice as fast), POOL rows; the filters are
    then applied to those. Only if that leaves fewer than `limit` rows while the pool was
    full (filters removed many) does a joined query rank the filtered rows directly.
    """
    pool = max(POOL, 2 * limit)
    hits = conn.execute(f"SELECT rowid, bm25({FTS}) AS bm FROM {FTS} WHERE {FTS} MATCH ? ORDER BY bm LIMIT ?",
                        (expr, pool)).fetchall()
    bm = {seq: value for seq, value in hits}
    rows = []
    for start in range(0, len(hits), 500):
        part = [seq for seq, _ in hits[start:start + 500]]
        # NOT INDEXED: look the rows up by primary key, not by scanning the user/type index
        rows += conn.execute(f"SELECT m.* FROM memories m NOT INDEXED WHERE m.seq IN ({','.join('?' * len(part))})"
                             f" AND {where}",
                             [*part, *params]).fetchall()
    if len(rows) < limit and len(hits) == pool:
        joined = conn.execute(
            f"SELECT m.*, bm25({FTS}) AS bm FROM {FTS} JOIN memories m NOT INDEXED ON m.seq = {FTS}.rowid"
            f" WHERE {FTS} MATCH ? AND {where} ORDER BY bm LIMIT ?", [expr, *params, max(CANDIDATES, limit)]).fetchall()
        rows, bm = joined, {r["seq"]: r["bm"] for r in joined}
    rows.sort(key=lambda r: bm[r["seq"]])
    rows = rows[:max(CANDIDATES, limit)]
    return rows, dict(zip((r["seq"] for r in rows), fts.relevance([bm[r["seq"]] for r in rows])))


def _focus(conn, terms: list[str]) -> list[str]:
    if len(terms) < 2:
        return terms
    rows = conn.execute("SELECT max(seq) FROM memories").fetchone()[0] or 0  # O(1); >= the row count
    if rows < MIN_ROWS_TO_FOCUS:
        return terms
    return fts.focus_terms(terms, fts.doc_frequencies(conn, FTS, terms), budget=POSTINGS_BUDGET)


def _by_importance(store: "MemoryStore", where: str, params: list, limit: int, now: float) -> list[tuple[MemoryItem, float]]:
    with store.read() as conn:
        rows = conn.execute(f"SELECT m.* FROM memories m WHERE {where} ORDER BY m.importance DESC, "
                            "m.created_at DESC LIMIT ?", [*params, max(CANDIDATES, limit)]).fetchall()
    scored = [(MemoryItem.from_row(r), combined_score(0.0, r["importance"], r["created_at"], now)) for r in rows]
    scored.sort(key=lambda pair: (-pair[1], -pair[0].created_at))
    return scored[:limit]


def _blend_vectors(store, conn, query, rows, relevance, where, params, limit):
    """Add the nearest memories by embedding and average cosine into relevance."""
    vec_rows = conn.execute(f"SELECT v.seq, v.vector FROM memory_vectors v JOIN memories m ON m.seq = v.seq"
                            f" WHERE {where}", params).fetchall()
    sims = cosine_top(store.embedder.encode([query])[0], [(r[0], r[1]) for r in vec_rows], max(CANDIDATES, limit))
    known = {r["seq"] for r in rows}
    extra = [s for s in sims if s not in known]
    if extra:
        marks = ",".join("?" * len(extra))
        rows = list(rows) + conn.execute(f"SELECT m.*, 0.0 AS bm FROM memories m WHERE m.seq IN ({marks})",
                                         extra).fetchall()
    blended = {r["seq"]: 0.5 * relevance.get(r["seq"], 0.0) + 0.5 * max(0.0, sims.get(r["seq"], 0.0))
               for r in rows}
    return rows, blended
