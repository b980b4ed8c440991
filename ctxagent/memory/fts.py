"""Full-text search over SQLite FTS5 that works for Chinese, shared by memory and rag.

Texts and queries go through `ctxagent.text.terms.terms()`; query terms are quoted and
OR-ed, so a query is always data. FTS5 `bm25()` is normalised by the query's best score;
`focus_terms` bounds search time (docs/memory-rag.md, "How search works").
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import Iterable, Sequence

from ctxagent.text.terms import terms

#: Terms hold CJK characters, ASCII letters and digits, `_` and `.` (numbers like 3.14).
TOKENIZE = "unicode61 remove_diacritics 0 tokenchars '_.'"

#: Most distinct query terms used in one MATCH (a pasted page must not build a huge query).
MAX_QUERY_TERMS = 64

#: Text whose terms fingerprint the tokenizer: if `terms()` changes (stemmer, identifier
#: splitting, CJK rules), indexes built with the old terms no longer match new queries,
#: so `ensure_current` rebuilds them. Bump INDEX_VERSION for changes the probe misses.
INDEX_VERSION = 1
_PROBE = "ContextBuilder parse_cfg refreshed progress bars classes 3.14 Pandas内存优化 ありがとう 한국어"

STATE_SQL = "CREATE TABLE _fts_state (fts_table TEXT PRIMARY KEY, signature TEXT NOT NULL)"


def create_fts_table(conn: sqlite3.Connection, table: str) -> None:
    """Create the FTS5 table `table(terms)`; its rowid mirrors the indexed row's key."""
    conn.execute(f'CREATE VIRTUAL TABLE {table} USING fts5(terms, tokenize="{TOKENIZE}")')


def signature() -> str:
    """Fingerprint of the current tokenizer and index layout (16 hex characters)."""
    probe = "\x1f".join(terms(_PROBE))
    return hashlib.sha256(f"{INDEX_VERSION}|{TOKENIZE}|{probe}".encode()).hexdigest()[:16]


def ensure_current(conn: sqlite3.Connection, table: str, source_sql: str) -> bool:
    """Rebuild FTS table `table` if another tokenizer built it; True if rebuilt. `source_sql`
    selects (rowid, text, ...) of every row. Runs under `BEGIN IMMEDIATE` with a re-check (one
    opener rebuilds); `conn` in autocommit mode, with the `_fts_state` table."""
    current = signature()
    if _stored(conn, table) == current:
        return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _stored(conn, table) != current:
            conn.execute(f"DELETE FROM {table}")
            rows = conn.execute(source_sql).fetchall()
            conn.executemany(f"INSERT INTO {table} (rowid, terms) VALUES (?, ?)",
                             ((row[0], index_text(*row[1:])) for row in rows))
            conn.execute("INSERT OR REPLACE INTO _fts_state (fts_table, signature) VALUES (?, ?)", (table, current))
            rebuilt = True
        else:
            rebuilt = False
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return rebuilt


def _stored(conn: sqlite3.Connection, table: str) -> str | None:
    row = conn.execute("SELECT signature FROM _fts_state WHERE fts_table = ?", (table,)).fetchone()
    return row[0] if row else None


def index_text(*texts: str) -> str:
    """The `terms` column value for `texts`: their index terms joined by spaces."""
    return " ".join(term for text in texts if text for term in terms(text))


def query_terms(query: str) -> list[str]:
    """Distinct index terms of `query`, in first-seen order, at most MAX_QUERY_TERMS."""
    return list(dict.fromkeys(terms(query)))[:MAX_QUERY_TERMS]


def match_expression(query_terms_: Iterable[str]) -> str | None:
    """An FTS5 MATCH string: every term quoted (`"` doubled), OR-ed; None if no terms."""
    quoted = ['"' + term.replace('"', '""') + '"' for term in query_terms_ if term]
    return " OR ".join(quoted) if quoted else None


def relevance(raw_bm25: Sequence[float]) -> list[float]:
    """FTS5 bm25() values (negative, smaller = better) -> relevance in [0, 1], best = 1.0."""
    best = min(raw_bm25, default=0.0)
    if best >= 0:
        return [0.0 for _ in raw_bm25]
    return [value / best for value in raw_bm25]


def insert(conn: sqlite3.Connection, table: str, rowid: int, text: str) -> None:
    """Index `text` under a NEW `rowid` in FTS table `table`."""
    conn.execute(f"INSERT INTO {table} (rowid, terms) VALUES (?, ?)", (rowid, index_text(text)))


def upsert(conn: sqlite3.Connection, table: str, rowid: int, text: str) -> None:
    """Index `text` under `rowid` in FTS table `table`, replacing what was there."""
    conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
    conn.execute(f"INSERT INTO {table} (rowid, terms) VALUES (?, ?)", (rowid, index_text(text)))


def doc_frequencies(conn: sqlite3.Connection, table: str, candidates: Sequence[str]) -> dict[str, int]:
    """{term: number of rows of FTS table `table` holding it} for the `candidates` found.

    Reads the table's `fts5vocab` companion `temp.<table>_vocab`, created on first use.
    """
    vocab = f"{table}_vocab"
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab} USING fts5vocab(main, {table}, row)")
    if not candidates:
        return {}
    marks = ",".join("?" * len(candidates))
    rows = conn.execute(f"SELECT term, doc FROM temp.{vocab} WHERE term IN ({marks})", list(candidates))
    return {term: docs for term, docs in rows}


def focus_terms(terms_: Sequence[str], frequencies: dict[str, int], *, budget: int) -> list[str]:
    """The rarest query terms whose postings add up to at most `budget` rows (the rarest always),
    in query order; terms absent from the index dropped; `terms_` unchanged when none occurs.
    Why: bm25() costs per matching row and term; rare terms carry the idf (docs/memory-rag.md)."""
    present = sorted((t for t in dict.fromkeys(terms_) if frequencies.get(t)), key=lambda t: frequencies[t])
    picked: set[str] = set()
    used = 0
    for term in present:
        if picked and used + frequencies[term] > budget:
            break
        picked.add(term)
        used += frequencies[term]
    return [t for t in dict.fromkeys(terms_) if t in picked] or list(terms_)
