"""The shared FTS helpers: CJK-aware terms, queries as data, bm25 normalisation."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxagent.memory import fts


def _table(rows: list[str]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    fts.create_fts_table(conn, "t")
    for i, text in enumerate(rows, 1):
        fts.upsert(conn, "t", i, text)
    return conn


def _match(conn: sqlite3.Connection, query: str) -> list[int]:
    expr = fts.match_expression(fts.query_terms(query))
    if expr is None:
        return []
    return [r[0] for r in conn.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t)", (expr,))]


def test_chinese_text_is_indexed_as_unigrams_and_bigrams() -> None:
    conn = _table(["Pandas内存优化", "今天天气很好", "memory layout of arrays"])
    assert _match(conn, "如何优化Pandas的内存占用?")[0] == 1
    assert _match(conn, "内存") == [1]
    assert _match(conn, "天气") == [2]


def test_english_is_stemmed_and_identifiers_split() -> None:
    conn = _table(["refreshes the progress bars", "parse_cfg reads ContextBuilder settings"])
    assert _match(conn, "progress bar refreshed") == [1]
    assert _match(conn, "parse config") == [2]
    assert _match(conn, "context builder") == [2]
    assert _match(conn, "parse_cfg") == [2]


@pytest.mark.parametrize("query", ['"', '""', '"unbalanced', "*", "pre*", "NEAR", "NEAR(a b, 2)", "-", "-x",
                                   "a:b", "col:value", "AND", "OR", "NOT x", "(", ")", "^", "{a b}", "+", "'",
                                   "a\"b", "x OR", "* * *", "\\", "\x00"])
def test_fts_syntax_in_a_query_is_data(query: str) -> None:
    conn = _table(['a:b "quoted" NEAR x-ray pre* AND OR NOT', "other"])
    _match(conn, query)  # never an FTS5 syntax error
    expr = fts.match_expression(fts.query_terms(query))
    assert expr is None or all(part.startswith('"') and part.endswith('"') for part in expr.split(" OR "))


def test_words_that_are_fts_operators_are_searched_literally() -> None:
    conn = _table(["the NEAR operator and the AND keyword", "nothing here"])
    assert _match(conn, "NEAR") == [1]
    assert _match(conn, "keyword:AND") == [1]


def test_match_expression_quotes_and_escapes_every_term() -> None:
    assert fts.match_expression(['a"b', "c"]) == '"a""b" OR "c"'
    assert fts.match_expression([]) is None


def test_query_terms_are_distinct_and_capped() -> None:
    assert fts.query_terms("bar bar bars") == ["bar"]
    assert len(fts.query_terms(" ".join(f"word{i}x" for i in range(500)))) == fts.MAX_QUERY_TERMS


def test_relevance_normalises_bm25_so_the_best_is_one() -> None:
    assert fts.relevance([-4.0, -2.0, -1.0]) == [1.0, 0.5, 0.25]
    assert fts.relevance([]) == []
    assert fts.relevance([0.0]) == [0.0]


def test_focus_terms_keeps_the_rarest_terms_within_the_budget() -> None:
    freq = {"的": 900, "内存": 12, "优化": 30, "内": 400}
    assert fts.focus_terms(["的", "内存", "优化", "内", "xyz"], freq, budget=100) == ["内存", "优化"]
    assert fts.focus_terms(["的", "内存"], freq, budget=5) == ["内存"]  # the rarest always stays
    assert fts.focus_terms(["的", "内"], freq, budget=10_000) == ["的", "内"]
    assert fts.focus_terms(["xyz", "abc"], freq, budget=100) == ["xyz", "abc"]


def test_doc_frequencies_reads_the_vocabulary() -> None:
    conn = _table(["内存 优化", "内存", "other"])
    assert fts.doc_frequencies(conn, "t", ["内存", "优化", "absent"]) == {"内存": 2, "优化": 1}


def test_an_index_built_by_another_tokenizer_is_rebuilt_on_open(tmp_path, monkeypatch) -> None:
    from ctxagent.memory import MemoryStore

    db = tmp_path / "memory.db"
    store = MemoryStore(db)
    item = store.add("Pandas内存优化", "semantic")
    with store.write() as conn:  # as if an older terms() had written other terms
        conn.execute("UPDATE memories_fts SET terms = 'stale words' WHERE rowid = 1")
    store.close()
    assert MemoryStore(db).search("内存") == []  # same signature: left alone
    monkeypatch.setattr(fts, "INDEX_VERSION", fts.INDEX_VERSION + 1)  # the tokenizer changed
    reopened = MemoryStore(db)
    assert [m.id for m, _ in reopened.search("内存")] == [item.id]
    with reopened.read() as conn:
        assert conn.execute("SELECT signature FROM _fts_state").fetchone()[0] == fts.signature()
    assert fts.ensure_current(reopened._conn, "memories_fts", "SELECT seq, content FROM memories") is False


def test_knowledge_base_index_is_rebuilt_too(tmp_path, monkeypatch) -> None:
    from ctxagent.tools import RAGTool

    rag = RAGTool(tmp_path / "kb")
    rag.run({"action": "add_text", "text": "Rollback with deploy rollback", "title": "Ops guide"})
    with rag.kb.write() as conn:
        conn.execute("UPDATE chunks_fts SET terms = 'stale'")
    monkeypatch.setattr(fts, "INDEX_VERSION", fts.INDEX_VERSION + 1)
    hits = RAGTool(tmp_path / "kb").run({"action": "search", "query": "ops guide rollback"})
    assert hits and hits[0]["title"] == "Ops guide"


_PROPERTY_TABLE = _table(['a:b "quoted" NEAR x-ray pre* AND OR NOT 内存优化 parse_cfg 3.14'])


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80) | st.text(alphabet='"*:-^(){}+NEARORNOTAND 内存_.\\\'', max_size=40))
def test_any_query_text_is_data_never_fts_syntax(query: str) -> None:
    _match(_PROPERTY_TABLE, query)  # raises sqlite3.OperationalError on an FTS5 syntax error
