"""NoteTool: every action, its data and text forms, and every input error."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from ctxagent.errors import CtxAgentError, NotFoundError, ToolInputError, ToolRefusedError
from ctxagent.notes.model import NOTE_ID_RE, NOTE_TYPES
from ctxagent.tools import NoteTool


@pytest.fixture
def notes(tmp_path: Path) -> NoteTool:
    return NoteTool(workspace=tmp_path / "notes")


def _create(tool: NoteTool, title: str = "Phase 1", content: str = "body", note_type: str = "general",
            tags: list[str] | None = None) -> str:
    return tool.run({"action": "create", "title": title, "content": content,
                     "note_type": note_type, "tags": tags or []})


def test_create_returns_generated_id_and_writes_markdown_file(notes: NoteTool) -> None:
    note_id = _create(notes, "Refactoring - Phase 1", "## Status\nDone.", "task_state", ["refactoring"])
    assert NOTE_ID_RE.fullmatch(note_id) and note_id.startswith("note_")
    text = (notes.workspace / f"{note_id}.md").read_text(encoding="utf-8")
    assert text.startswith("---\nid: " + note_id + "\n")
    assert "type: task_state" in text and text.rstrip().endswith("## Status\nDone.")
    index = json.loads((notes.workspace / "notes_index.json").read_text(encoding="utf-8"))
    assert index["notes"][note_id]["title"] == "Refactoring - Phase 1"


def test_ids_are_unique_for_notes_created_in_the_same_second(notes: NoteTool) -> None:
    ids = {_create(notes, f"n{i}") for i in range(12)}
    assert len(ids) == 12


def test_read_returns_metadata_and_content(notes: NoteTool) -> None:
    note_id = _create(notes, "T", "line 1\nline 2", "conclusion", ["a", "b"])
    note = notes.run({"action": "read", "note_id": note_id})
    assert note["content"] == "line 1\nline 2"
    meta = note["metadata"]
    assert {k: meta[k] for k in ("id", "title", "type", "tags")} == {
        "id": note_id, "title": "T", "type": "conclusion", "tags": ["a", "b"]}
    assert datetime.fromisoformat(meta["created_at"]) == datetime.fromisoformat(meta["updated_at"])
    assert Path(meta["file_path"]).name == f"{note_id}.md"


def test_update_changes_only_given_fields_and_bumps_updated_at(notes: NoteTool) -> None:
    note_id = _create(notes, "Old", "old body", "action", ["x"])
    before = notes.run({"action": "read", "note_id": note_id})["metadata"]
    after = notes.run({"action": "update", "note_id": note_id, "content": "new body"})
    assert after["content"] == "new body"
    assert after["metadata"]["title"] == "Old" and after["metadata"]["tags"] == ["x"]
    assert after["metadata"]["created_at"] == before["created_at"]
    assert datetime.fromisoformat(after["metadata"]["updated_at"]) >= datetime.fromisoformat(before["updated_at"])
    notes.run({"action": "update", "note_id": note_id, "note_type": "conclusion", "tags": []})
    again = notes.run({"action": "read", "note_id": note_id})
    assert again["metadata"]["type"] == "conclusion" and again["metadata"]["tags"] == []
    assert (notes.workspace / f"{note_id}.md.bak").exists()


def test_delete_removes_file_and_index_entry(notes: NoteTool) -> None:
    note_id = _create(notes)
    assert notes.run({"action": "delete", "note_id": note_id}) == note_id
    assert not (notes.workspace / f"{note_id}.md").exists()
    assert notes.run({"action": "list"}) == []
    with pytest.raises(NotFoundError):
        notes.run({"action": "read", "note_id": note_id})


def test_list_rows_sorted_by_update_time_with_textbook_keys(notes: NoteTool) -> None:
    first = _create(notes, "first")
    second = _create(notes, "second")
    notes.run({"action": "update", "note_id": first, "content": "touched"})
    rows = notes.run({"action": "list"})
    assert [r["note_id"] for r in rows] == [first, second]
    assert set(rows[0]) >= {"note_id", "title", "type", "tags", "content", "updated_at"}
    assert rows[0]["content"] == "touched"


def test_list_filters_by_type_and_any_tag_and_limits(notes: NoteTool) -> None:
    _create(notes, "b1", note_type="blocker", tags=["db"])
    _create(notes, "b2", note_type="blocker", tags=["ui"])
    _create(notes, "a1", note_type="action", tags=["db"])
    assert {r["title"] for r in notes.run({"action": "list", "note_type": "blocker"})} == {"b1", "b2"}
    assert {r["title"] for r in notes.run({"action": "list", "tags": ["db", "zzz"]})} == {"b1", "a1"}
    assert [r["title"] for r in notes.run({"action": "list", "note_type": "blocker", "tags": ["ui"]})] == ["b2"]
    assert len(notes.run({"action": "list", "limit": 2})) == 2


def test_search_ranks_by_relevance_not_recency(notes: NoteTool) -> None:
    _create(notes, "Database migration plan", "Migrate the users table; add an index on email.")
    _create(notes, "Release checklist", "Tag, build, publish. Mention the migration in notes.")
    _create(notes, "Lunch", "sandwiches")
    rows = notes.run({"action": "search", "query": "database migration"})
    assert [r["title"] for r in rows] == ["Database migration plan", "Release checklist"]
    assert rows[0]["score"] == 1.0 and 0 < rows[1]["score"] < 1.0


def test_search_chinese_query_finds_chinese_note(notes: NoteTool) -> None:
    _create(notes, "Pandas内存优化", "使用 category 类型可以显著减少内存占用。", "conclusion")
    _create(notes, "部署流程", "先构建镜像，再发布到测试环境。")
    rows = notes.run({"action": "search", "query": "如何优化Pandas的内存占用?"})
    assert rows[0]["title"] == "Pandas内存优化"


def test_search_matches_tags_and_filters(notes: NoteTool) -> None:
    _create(notes, "one", "nothing here", "blocker", ["performance"])
    _create(notes, "two", "performance matters", "action")
    assert {r["title"] for r in notes.run({"action": "search", "query": "performance"})} == {"one", "two"}
    rows = notes.run({"action": "search", "query": "performance", "note_type": "action"})
    assert [r["title"] for r in rows] == ["two"]
    assert notes.run({"action": "search", "query": "unrelatedword"}) == []


def test_summary_counts_types_and_lists_recent(notes: NoteTool) -> None:
    for i in range(7):
        _create(notes, f"n{i}", note_type="blocker" if i % 2 else "action")
    summary = notes.run({"action": "summary"})
    assert summary["total_notes"] == 7
    assert summary["type_distribution"] == {"action": 4, "blocker": 3}
    assert [r["title"] for r in summary["recent_notes"]] == ["n6", "n5", "n4", "n3", "n2"]
    assert set(summary["recent_notes"][0]) >= {"id", "title", "type", "tags", "updated_at"}


def test_summary_rows_carry_their_tags(notes: NoteTool) -> None:
    """New-user trial: `notes summary` showed blank tags for a tagged note."""
    _create(notes, "Perf", "cache the config", "action", ["cfg", "perf"])
    assert notes.run({"action": "summary"})["recent_notes"][0]["tags"] == ["cfg", "perf"]


def test_model_text_is_compact_and_plain(notes: NoteTool) -> None:
    note_id = _create(notes, "Dependency conflict", "pydantic 1 vs 2", "blocker", ["deps"])
    listing = notes.execute({"action": "list"})
    assert listing.ok and note_id in listing.content and "[blocker]" in listing.content
    assert "#deps" in listing.content and "\x1b[" not in listing.content
    assert notes.execute({"action": "summary"}).content.startswith("1 notes (blocker=1)")
    assert "pydantic 1 vs 2" in notes.execute({"action": "read", "note_id": note_id}).content


@pytest.mark.parametrize("bad_type", ["idea", "TODO", "Blocker", "general "])
def test_unknown_type_is_refused_with_the_list(notes: NoteTool, bad_type: str) -> None:
    result = notes.execute({"action": "create", "title": "x", "note_type": bad_type})
    assert not result.ok and all(t in result.content for t in NOTE_TYPES)
    assert notes.run({"action": "list"}) == []


def test_unknown_type_filter_is_an_error_not_an_empty_list(notes: NoteTool) -> None:
    with pytest.raises(ToolInputError, match="task_state"):
        notes.run({"action": "list", "note_type": "todo"})


@pytest.mark.parametrize("args, message", [
    ({"action": "create", "content": "no title"}, "title"),
    ({"action": "create", "title": "   "}, "title"),
    ({"action": "create", "title": "x" * 501}, "500"),
    ({"action": "create", "title": "t", "tags": [1, 2]}, "tags"),
    ({"action": "update", "note_id": "note_x"}, "nothing to update"),
    ({"action": "read"}, "note_id"),
    ({"action": "search"}, "query"),
    ({"action": "search", "query": "  "}, "query"),
    ({"action": "explode"}, "action"),
    ({"action": "list", "limit": 0}, "limit"),
])
def test_bad_arguments_are_clear_errors(notes: NoteTool, args: dict, message: str) -> None:
    result = notes.execute(args)
    assert not result.ok and message in result.content
    with pytest.raises(CtxAgentError):
        notes.run(args)


def test_missing_notes_are_not_found(notes: NoteTool) -> None:
    _create(notes)
    for action in ("read", "update", "delete"):
        with pytest.raises(NotFoundError, match="list or search"):
            notes.run({"action": action, "note_id": "note_20990101_000000_abcdef", "title": "t"})


def test_max_notes_is_enforced_with_a_clear_error(tmp_path: Path) -> None:
    tool = NoteTool(workspace=tmp_path / "n", max_notes=3)
    ids = [_create(tool, f"n{i}") for i in range(3)]
    with pytest.raises(ToolRefusedError, match="max_notes=3"):
        _create(tool, "one too many")
    tool.run({"action": "delete", "note_id": ids[0]})
    _create(tool, "fits again")
    assert tool.run({"action": "summary"})["total_notes"] == 3


def test_extra_textbook_keys_are_ignored(notes: NoteTool) -> None:
    note_id = notes.run({"action": "create", "title": "t", "content": "c", "note_type": "task_state",
                         "task_id": 3, "tags": ["deep_research"]})
    assert notes.run({"action": "read", "note_id": note_id})["metadata"]["tags"] == ["deep_research"]


def test_tags_as_comma_string_are_split_and_deduplicated(notes: NoteTool) -> None:
    note_id = notes.run({"action": "create", "title": "t", "tags": "a, b,a,, c"})
    assert notes.run({"action": "read", "note_id": note_id})["metadata"]["tags"] == ["a", "b", "c"]


def test_reading_an_absent_workspace_creates_nothing(tmp_path: Path) -> None:
    tool = NoteTool(workspace=tmp_path / "absent")
    assert tool.run({"action": "list"}) == []
    assert tool.run({"action": "summary"})["total_notes"] == 0
    assert not (tmp_path / "absent").exists()


def test_for_repo_uses_the_state_dir(tmp_path: Path) -> None:
    tool = NoteTool.for_repo(tmp_path)
    _create(tool)
    assert len(list((tmp_path / ".ctxagent" / "notes").glob("note_*.md"))) == 1


def test_schema_is_an_openai_function(notes: NoteTool) -> None:
    schema = notes.schema()
    assert schema["function"]["name"] == "note"
    assert set(schema["function"]["parameters"]["properties"]) >= {"action", "title", "note_id", "query"}


def test_decision_is_a_note_type(tmp_path) -> None:
    """HelloCodeAgentCli's guide records decisions: note_type "decision"."""
    from ctxagent.tools.notes import NoteTool

    tool = NoteTool(workspace=str(tmp_path))
    result = tool.execute({"action": "create", "title": "Use TOML", "content": "chosen over YAML",
                           "note_type": "decision"})
    assert result.ok, result.content
    assert tool.run({"action": "list", "note_type": "decision"})[0]["type"] == "decision"
