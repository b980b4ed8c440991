"""The `memory` tool: every action, error paths, the textbook's calling conventions."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.errors import NotFoundError, ToolInputError
from ctxagent.tools import MemoryTool


@pytest.fixture
def tool(tmp_path: Path) -> MemoryTool:
    return MemoryTool.for_repo(tmp_path)


def test_default_location_is_the_repo_state_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert MemoryTool.for_repo(tmp_path).store.path == tmp_path / ".ctxagent" / "memory.db"
    assert MemoryTool(workspace=tmp_path).store.path == tmp_path / ".ctxagent" / "memory.db"
    assert MemoryTool(db_path=tmp_path / "x.db").store.path == tmp_path / "x.db"
    monkeypatch.chdir(tmp_path)
    assert MemoryTool().store.path == Path(".ctxagent") / "memory.db"


def test_add_returns_the_id_and_keeps_extra_keys_as_metadata(tool: MemoryTool) -> None:
    memory_id = tool.run({"action": "add", "content": "2024年开始深入研究AI Agent技术", "memory_type": "episodic",
                          "importance": 0.8, "event_type": "milestone", "location": "研发中心"})
    item = tool.store.get(memory_id)
    assert item.metadata == {"event_type": "milestone", "location": "研发中心"}
    assert (item.memory_type, item.importance) == ("episodic", 0.8)
    assert tool.store.get(tool.run({"action": "add", "content": "x"})).memory_type == "working"


def test_session_id_is_recorded(tmp_path: Path) -> None:
    tool = MemoryTool(workspace=tmp_path, session_id="20260101-000000-abcd")
    memory_id = tool.run({"action": "add", "content": "x"})
    assert tool.store.get(memory_id).metadata == {"session_id": "20260101-000000-abcd"}


def test_search_returns_dicts_with_the_textbook_fields_and_compact_text(tool: MemoryTool) -> None:
    tool.run({"action": "add", "content": "Pandas内存优化", "memory_type": "semantic", "importance": 0.8})
    tool.run({"action": "add", "content": "Li Si is a frontend engineer", "memory_type": "semantic"})
    rows = tool.run({"action": "search", "query": "如何优化Pandas的内存占用?"})
    assert rows[0]["content"] == "Pandas内存优化"
    assert {"id", "content", "memory_type", "importance", "timestamp", "score"} <= set(rows[0])
    result = tool.execute({"action": "search", "query": "frontend engineer"})
    assert result.ok and "frontend engineer" in result.content and "\x1b" not in result.content
    assert result.content.startswith("- ") and rows[0]["id"][:8] in tool.execute(
        {"action": "search", "query": "Pandas"}).content


def test_search_filters_by_memory_type_types_or_memory_types(tool: MemoryTool) -> None:
    tool.run({"action": "add", "content": "python note a", "memory_type": "semantic"})
    tool.run({"action": "add", "content": "python note b", "memory_type": "episodic"})
    for key, value in (("memory_type", "semantic"), ("memory_types", ["semantic"]), ("types", ["semantic"])):
        rows = tool.run({"action": "search", "query": "python", key: value})
        assert [r["memory_type"] for r in rows] == ["semantic"]


def test_search_can_leave_out_one_sessions_memories_a_key_the_model_is_not_shown(tmp_path: Path) -> None:
    now = MemoryTool(workspace=tmp_path, session_id="s-now")
    for i in range(6):
        now.run({"action": "add", "content": f"release checklist item {i}", "importance": 0.9})
    kept = MemoryTool(workspace=tmp_path, session_id="s-before").run(
        {"action": "add", "content": "the release checklist is in docs/release.md", "importance": 0.3})
    rows = now.run({"action": "search", "query": "release checklist", "exclude_session_id": "s-now"})
    assert [r["id"] for r in rows] == [kept]
    assert kept not in [r["id"] for r in now.run({"action": "search", "query": "release checklist"})]  # crowded out
    assert "exclude_session_id" not in now.schema()["function"]["parameters"]["properties"]
    added = now.store.get(now.run({"action": "add", "content": "x", "exclude_session_id": "s-now"}))
    assert added.metadata == {"session_id": "s-now"}  # a search option, never metadata


def test_search_skips_memories_below_min_importance_default_0_1(tool: MemoryTool) -> None:
    tool.run({"action": "add", "content": "trivial python fact", "importance": 0.05})
    assert tool.run({"action": "search", "query": "python"}) == []
    assert len(tool.run({"action": "search", "query": "python", "min_importance": 0})) == 1
    assert "no memories match" in tool.execute({"action": "search", "query": "python"}).content


def test_update_remove_and_their_errors(tool: MemoryTool) -> None:
    memory_id = tool.run({"action": "add", "content": "draft", "importance": 0.3})
    row = tool.run({"action": "update", "memory_id": memory_id[:8], "content": "final", "importance": 0.9,
                    "reviewed": True})
    assert (row["content"], row["importance"], row["metadata"]) == ("final", 0.9, {"reviewed": True})
    assert tool.run({"action": "remove", "memory_id": memory_id}) == memory_id
    with pytest.raises(NotFoundError):
        tool.run({"action": "remove", "memory_id": memory_id})
    with pytest.raises(ToolInputError, match="memory_id"):
        tool.run({"action": "update", "content": "x"})
    result = tool.execute({"action": "remove", "memory_id": "../../etc"})
    assert not result.ok and "no memory" in result.content


def test_summary_and_stats(tool: MemoryTool) -> None:
    tool.run({"action": "add", "content": "a", "memory_type": "semantic", "importance": 0.9})
    tool.run({"action": "add", "content": "b", "memory_type": "working", "importance": 0.2})
    summary = tool.run({"action": "summary", "limit": 1})
    assert summary["total_memories"] == 2 and summary["important_memories"][0]["content"] == "a"
    stats = tool.run({"action": "stats"})
    assert stats["memories_by_type"]["working"]["count"] == 1 and stats["enabled_types"][0] == "working"
    assert "2 memories" in tool.execute({"action": "stats"}).content


def test_forget_strategies_through_the_tool(tool: MemoryTool) -> None:
    for imp in (0.05, 0.5, 0.9):
        tool.run({"action": "add", "content": f"m {imp}", "importance": imp})
    assert tool.run({"action": "forget"}) == {"strategy": "importance_based", "forgotten": 1, "remaining": 2}
    assert tool.run({"action": "forget", "strategy": "time_based", "max_age_days": 1})["forgotten"] == 0
    assert tool.run({"action": "forget", "strategy": "capacity_based", "max_capacity": 1})["remaining"] == 1
    bad = tool.execute({"action": "forget", "strategy": "random"})
    assert not bad.ok and "strategy" in bad.content


def test_capacity_based_forget_defaults_to_the_tool_capacity(tmp_path: Path) -> None:
    tool = MemoryTool(workspace=tmp_path, max_capacity=2)
    for i in range(4):
        tool.run({"action": "add", "content": f"m{i}"})
    assert tool.run({"action": "forget", "strategy": "capacity_based", "threshold": 0.3})["remaining"] == 2


def test_consolidate_with_threshold_or_importance_threshold(tool: MemoryTool) -> None:
    a = tool.run({"action": "add", "content": "important", "importance": 0.8})
    tool.run({"action": "add", "content": "minor", "importance": 0.4})
    data = tool.run({"action": "consolidate", "threshold": 0.7})
    assert data["ids"] == [a] and data["to_type"] == "episodic"
    data = tool.run({"action": "consolidate", "from_type": "episodic", "to_type": "semantic",
                     "importance_threshold": 0.75})
    assert data["consolidated"] == 1


def test_clear_all_needs_explicit_confirmation(tool: MemoryTool) -> None:
    tool.run({"action": "add", "content": "keep"})
    for args in ({"action": "clear_all"}, {"action": "clear_all", "confirm": False}):
        result = tool.execute(args)
        assert not result.ok and "confirm: true" in result.content
    assert tool.run({"action": "stats"})["total_memories"] == 1
    assert tool.run({"action": "clear_all", "confirm": True}) == {"cleared": 1}
    assert tool.run({"action": "stats"})["total_memories"] == 0


@pytest.mark.parametrize("args, fragment", [
    ({"action": "add", "content": "x", "importance": 1.5}, "importance"),
    ({"action": "add", "content": "x", "importance": -1}, "importance"),
    ({"action": "add", "content": ""}, "content is required"),
    ({"action": "add", "content": "x", "memory_type": "procedural"}, "working, episodic"),
    ({"action": "fly"}, "action"),
    ({"action": "search", "query": "x", "limit": 0}, "limit"),
    ({"action": "search", "query": "x", "memory_types": ["bogus"]}, "memory_type"),
    ({}, "action"),
])
def test_bad_arguments_come_back_as_errors_the_model_can_act_on(tool: MemoryTool, args: dict, fragment: str) -> None:
    result = tool.execute(args)
    assert not result.ok and fragment in result.content
    with pytest.raises(ToolInputError):
        tool.run(args)


def test_disabled_memory_types_are_refused(tmp_path: Path) -> None:
    tool = MemoryTool(workspace=tmp_path, memory_types=["working", "episodic", "semantic"])
    result = tool.execute({"action": "add", "content": "x", "memory_type": "perceptual"})
    assert not result.ok and "working, episodic, semantic" in result.content
    with pytest.raises(ToolInputError):
        MemoryTool(workspace=tmp_path, memory_types=["long_term"])


def test_schema_is_an_openai_function_with_the_actions(tmp_path: Path) -> None:
    schema = MemoryTool(workspace=tmp_path).schema()["function"]["parameters"]
    assert schema["properties"]["action"]["enum"][:2] == ["add", "search"] and "importance" in schema["properties"]
    assert schema["properties"]["importance"]["anyOf"][0] == {"type": "number", "minimum": 0, "maximum": 1}
    assert "exclude_session_id" not in schema["properties"] and "exclude_stale" not in schema["properties"]
    assert "additionalProperties" not in schema  # other keys are allowed: they become metadata


def test_textbook_listing_runs_apart_from_the_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chapter 8's quick-start and MemoryTool examples, verbatim except the import."""
    monkeypatch.chdir(tmp_path)
    memory_tool = MemoryTool(user_id="user123")
    result1 = memory_tool.run({"action": "add", "content": "User Zhang San is a Python developer focusing on "
                               "machine learning and data analysis", "memory_type": "semantic", "importance": 0.8})
    memory_tool.run({"action": "add", "content": "Li Si is a frontend engineer skilled in React and Vue.js "
                     "development", "memory_type": "semantic", "importance": 0.7})
    memory_tool.run({"action": "add", "content": "User uploaded a Python code screenshot containing function "
                     "definitions", "memory_type": "perceptual", "importance": 0.7, "modality": "image",
                     "file_path": "./uploads/code_screenshot.png"})
    result = memory_tool.run({"action": "search", "query": "frontend engineer", "limit": 3})
    assert result[0]["content"].startswith("Li Si")
    assert memory_tool.run({"action": "summary"})["total_memories"] == 3
    found = memory_tool.execute("search", query="function definition", memory_types=["semantic", "perceptual"],
                                min_importance=0.5)
    assert found[0]["file_path"] == "./uploads/code_screenshot.png"
    memory_tool.execute("forget", strategy="importance_based", threshold=0.2)
    memory_tool.execute("forget", strategy="time_based", max_age_days=30)
    memory_tool.execute("forget", strategy="capacity_based", threshold=0.3)
    memory_tool.execute("consolidate", from_type="working", to_type="episodic", importance_threshold=0.7)
    memory_tool.execute("consolidate", from_type="episodic", to_type="semantic", importance_threshold=0.8)
    assert memory_tool.execute("stats")["total_memories"] == 3 and isinstance(result1, str)
    assert (tmp_path / ".ctxagent" / "memory.db").exists()


def test_textbook_execute_form_reports_failure_as_a_dict(tool: MemoryTool) -> None:
    assert tool.execute("remove", memory_id="00000000") == {
        "success": False, "error": tool.execute({"action": "remove", "memory_id": "00000000"}).content}


def test_context_engine_can_gather_memories_as_packets(tmp_path: Path) -> None:
    from ctxagent.context.gather import gather

    tool = MemoryTool.for_repo(tmp_path)
    tool.run({"action": "add", "content": "the build uses uv, not pip", "memory_type": "semantic",
              "importance": 0.9})
    found = gather("how do we build? uv or pip", memory_tool=tool)
    assert found.sources["memory_tool"]["ok"] and found.packets[0].content == "the build uses uv, not pip"
