"""MemoryStore: add, get, update, remove, clear; input checks; ids; users; search."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

from ctxagent.errors import NotFoundError, ToolInputError
from ctxagent.memory import MemoryStore, fts
from ctxagent.memory.model import MAX_CONTENT_CHARS


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    with MemoryStore(tmp_path / ".ctxagent" / "memory.db") as s:
        yield s


def test_add_and_get_round_trip(store: MemoryStore) -> None:
    item = store.add("用户张三是Python开发者", "semantic", 0.8, metadata={"concept": "user"})
    got = store.get(item.id)
    assert (got.content, got.memory_type, got.importance, got.metadata) == (
        "用户张三是Python开发者", "semantic", 0.8, {"concept": "user"})
    row = got.to_dict(0.5)
    assert set(row) >= {"id", "content", "memory_type", "importance", "timestamp", "score"}
    assert row["timestamp"][:4].isdigit() and "T" in row["timestamp"]


def test_perceptual_memory_keeps_file_path_and_infers_modality(store: MemoryStore) -> None:
    item = store.add("screenshot of the failing test", "perceptual", 0.7, file_path="./shots/fail.PNG")
    assert (item.file_path, item.modality) == ("./shots/fail.PNG", "image")
    assert store.add("recording", "perceptual", file_path="a.wav").modality == "audio"
    assert store.add("text", "perceptual", modality="Document").modality == "document"


@pytest.mark.parametrize("importance", [-0.01, 1.01, math.nan, "high", True, None])
def test_importance_outside_0_1_is_refused(store: MemoryStore, importance: object) -> None:
    with pytest.raises(ToolInputError, match="importance"):
        store.add("x", "working", importance)  # type: ignore[arg-type]
    assert store.count() == 0


@pytest.mark.parametrize("importance", [0, 0.0, 1, 1.0, 0.5])
def test_importance_bounds_are_inclusive(store: MemoryStore, importance: float) -> None:
    assert store.add("x", "working", importance).importance == importance


@pytest.mark.parametrize("memory_type", ["procedural", "", "Working", "long_term"])
def test_unknown_memory_type_is_refused_with_the_list(store: MemoryStore, memory_type: str) -> None:
    with pytest.raises(ToolInputError, match="working, episodic, semantic, perceptual"):
        store.add("x", memory_type)


@pytest.mark.parametrize("content", ["", "   \n", None, 42, "nul\x00byte", "x" * (MAX_CONTENT_CHARS + 1)])
def test_bad_content_is_refused(store: MemoryStore, content: object) -> None:
    with pytest.raises(ToolInputError):
        store.add(content, "working")  # type: ignore[arg-type]


def test_bad_modality_is_refused(store: MemoryStore) -> None:
    with pytest.raises(ToolInputError, match="modality"):
        store.add("x", "perceptual", modality="image; DROP TABLE")


def test_update_changes_fields_merges_metadata_and_reindexes(store: MemoryStore) -> None:
    item = store.add("old words here", "working", 0.3, metadata={"a": 1})
    updated = store.update(item.id, content="brand new 内容", importance=0.9, memory_type="semantic",
                           metadata={"b": 2}, now=item.created_at + 5)
    assert (updated.content, updated.importance, updated.memory_type) == ("brand new 内容", 0.9, "semantic")
    assert updated.metadata == {"a": 1, "b": 2}
    assert updated.updated_at == item.created_at + 5 and updated.created_at == item.created_at
    assert store.search("old words") == []
    assert [m.id for m, _ in store.search("内容")] == [item.id]


def test_update_without_changes_is_refused(store: MemoryStore) -> None:
    item = store.add("x", "working")
    with pytest.raises(ToolInputError, match="at least one"):
        store.update(item.id)


def test_ids_accept_a_unique_prefix_and_refuse_ambiguous_or_bad_ones(store: MemoryStore) -> None:
    item = store.add("x", "working")
    assert store.get(item.id[:8]).id == item.id
    assert store.get(item.id.upper()).id == item.id
    for bad in ["", "abc", "../../etc/passwd", "x" * 40, "1234%", "' OR 1=1 --"]:
        with pytest.raises(NotFoundError):
            store.get(bad)
    with pytest.raises(NotFoundError):
        store.get("0000-0000")


def test_ambiguous_prefix_is_refused(store: MemoryStore) -> None:
    a, b = store.add("a", "working"), store.add("b", "working")
    with store.write() as conn:  # give the two ids a common prefix, as uuid4 sometimes does
        conn.execute("UPDATE memories SET id = 'abcd' || substr(id, 5) WHERE id IN (?, ?)", (a.id, b.id))
    with pytest.raises(ToolInputError, match="ambiguous"):
        store.get("abcd")
    assert store.get("abcd" + a.id[4:]).content == "a"


def test_remove_and_missing_ids(store: MemoryStore) -> None:
    item = store.add("to delete", "working")
    assert store.remove(item.id).id == item.id
    with pytest.raises(NotFoundError):
        store.get(item.id)
    with pytest.raises(NotFoundError):
        store.remove(item.id)
    assert store.search("delete") == []


def test_users_see_only_their_own_memories(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    alice, bob = MemoryStore(db, user_id="alice"), MemoryStore(db, user_id="bob")
    a = alice.add("alice likes tea", "semantic")
    bob.add("bob likes tea too", "semantic")
    assert [m.content for m, _ in alice.search("tea")] == ["alice likes tea"]
    with pytest.raises(NotFoundError):
        bob.get(a.id)
    assert bob.clear() == 1 and alice.count() == 1


def test_clear_deletes_everything_of_the_user(store: MemoryStore) -> None:
    for i in range(5):
        store.add(f"m {i}", "working")
    assert store.clear() == 5
    assert store.count() == 0 and store.search("m") == []


# ------------------------------------------------------------------ search

def test_C04_chinese_question_finds_the_chinese_memory(store: MemoryStore) -> None:
    store.add("Pandas内存优化", "semantic", 0.5)
    store.add("React组件性能分析", "semantic", 0.5)
    store.add("今天天气很好", "episodic", 0.5)
    hits = store.search("如何优化Pandas的内存占用?")
    assert hits[0][0].content == "Pandas内存优化"


def test_relevance_leads_then_importance_then_recency(store: MemoryStore) -> None:
    now = time.time()
    relevant = store.add("deploy the service with docker compose", "semantic", 0.1, now=now - 30 * 86400)
    store.add("docker is installed", "semantic", 1.0, now=now)
    hits = store.search("deploy service docker compose", now=now)
    assert hits[0][0].id == relevant.id
    same_a = store.add("cache invalidation note", "working", 0.9, now=now)
    same_b = store.add("cache invalidation note", "working", 0.2, now=now)
    ranked = [m.id for m, _ in store.search("cache invalidation", now=now)]
    assert ranked.index(same_a.id) < ranked.index(same_b.id)
    old = store.add("flaky test in ci", "working", 0.5, now=now - 60 * 86400)
    new = store.add("flaky test in ci", "working", 0.5, now=now)
    ranked = [m.id for m, _ in store.search("flaky test", now=now)]
    assert ranked.index(new.id) < ranked.index(old.id)


def test_search_filters_by_type_and_importance_and_limit(store: MemoryStore) -> None:
    for i in range(10):
        store.add(f"python tip {i}", "semantic" if i % 2 else "working", i / 10)
    hits = store.search("python tip", memory_types=["semantic"], min_importance=0.5, limit=10)
    assert {m.memory_type for m, _ in hits} == {"semantic"}
    assert all(m.importance >= 0.5 for m, _ in hits) and len(hits) == 3
    assert len(store.search("python tip", limit=4)) == 4
    with pytest.raises(ToolInputError):
        store.search("python", memory_types=["nope"])


def test_empty_query_lists_by_importance_and_punctuation_finds_nothing(store: MemoryStore) -> None:
    store.add("low", "working", 0.1)
    store.add("high", "working", 0.9)
    assert [m.content for m, _ in store.search("")] == ["high", "low"]
    assert store.search("?!... ---") == []


@pytest.mark.parametrize("query", ['C++ "quoted" NEAR(x) -flag key:value *', '"', "*", "NEAR", "-", ":",
                                   "AND OR NOT", 'NEAR("a" "b", 3)', "title:secret*"])
def test_fts_special_characters_in_queries_are_data(store: MemoryStore, query: str) -> None:
    store.add('C++ "quoted" NEAR(x) -flag key:value * title:secret', "semantic")
    hits = store.search(query, min_importance=0.0)
    if fts.query_terms(query):  # "AND OR NOT" are stop words: nothing to look for
        assert hits and "quoted" in hits[0][0].content
    else:
        assert hits == []


def test_add_many_is_one_transaction_all_or_none(store: MemoryStore) -> None:
    ids = store.add_many([{"content": "one 一"}, {"content": "two", "memory_type": "semantic", "importance": 0.9,
                                                 "created_at": 1_000_000.0}])
    assert len(ids) == 2 and store.get(ids[1]).created_at == 1_000_000.0
    assert [m.content for m, _ in store.search("一")] == ["one 一"]
    with pytest.raises(ToolInputError):
        store.add_many([{"content": "fine"}, {"content": "bad", "importance": 7}])
    assert store.count() == 2


def test_filters_that_remove_most_of_the_best_matches_still_find_the_rest(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The FTS pool is taken before filtering; when filters empty it, a joined query runs."""
    from ctxagent.memory import search

    monkeypatch.setattr(search, "POOL", 10)  # a small pool, as if the store held millions
    store.add_many([{"content": "alpha alpha", "memory_type": "working"} for _ in range(50)])
    store.add_many([{"content": f"alpha and many other words number {i}", "memory_type": "semantic"}
                    for i in range(3)])
    hits = store.search("alpha", memory_types=["semantic"], limit=5)
    assert len(hits) == 3 and {m.memory_type for m, _ in hits} == {"semantic"}
    assert len(store.search("alpha", limit=20)) == 20


@pytest.mark.parametrize("pool", [400, 10])
def test_exclude_session_leaves_out_only_that_sessions_memories(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch, pool: int) -> None:
    """In SQL, so the excluded rows never take a place of the limit: pool 10 is filled by
    them and the joined query runs; an empty query lists by importance."""
    from ctxagent.memory import search

    monkeypatch.setattr(search, "POOL", pool)
    store.add_many([{"content": f"deploy step {i} of the release", "memory_type": "episodic", "importance": 0.9,
                     "metadata": {"session_id": "s-now"}} for i in range(30)])
    earlier = store.add("deploy the release with make", "episodic", 0.3, metadata={"session_id": "s-before"}).id
    plain = store.add("deploy needs the VPN", "semantic", 0.3, metadata={"session": "s-now"}).id
    for query in ("deploy release", ""):
        assert {m.id for m, _ in store.search(query, limit=5, exclude_session="s-now")} == {earlier, plain}
        assert {m.metadata.get("session_id") for m, _ in store.search(query, limit=5)} == {"s-now"}
