"""The context_fetch tool: one call, several sources, ranked files, budgets per source."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ctxagent.errors import ToolInputError
from ctxagent.fetch.files import find_rg
from ctxagent.fetch.hits import render_hit
from ctxagent.fetch.render import memory_line, note_line
from ctxagent.fetch.search import file_header
from ctxagent.text.tokens import estimate_tokens
from ctxagent.tools import ContextFetchTool, NoteTool
from tests.fetch.conftest import repo  # noqa: F401  (the fixture: a fresh copy of the fetch fixture repo)


def _files_tokens(groups: list[dict]) -> int:
    return estimate_tokens("".join(file_header(g) + "".join(render_hit(h) for h in g["hits"]) for g in groups))


def test_natural_language_question_ranks_right_file_first(repo: Path) -> None:
    data = ContextFetchTool(repo).run({"query": "where are progress bars refreshed?"})
    assert set(data) == {"query", "sources", "unavailable", "info"}
    files = data["sources"]["files"]
    assert files[0]["path"] == "ui/progress_bar.py" and files[0]["score"] == 1.0
    lines = (repo / "ui" / "progress_bar.py").read_text(encoding="utf-8").split("\n")
    for hit in files[0]["hits"]:
        assert lines[hit["line"] - 1] == hit["text"]
        assert lines[hit["line"] - 1 - len(hit["context_before"]) : hit["line"] - 1] == hit["context_before"]
    assert any("def refresh" in h["text"] for h in files[0]["hits"])


def test_content_is_compact_text_grouped_by_file(repo: Path) -> None:
    result = ContextFetchTool(repo).execute({"query": "add a row to a table", "sources": ["files"]})
    assert result.ok and "\x1b[" not in result.content
    assert "ui/table.py  (score 1.00)" in result.content
    assert "def add_row(self, *cells: str) -> None:" in result.content


@pytest.mark.skipif(find_rg() is None, reason="ripgrep (rg) is not installed")
@pytest.mark.parametrize("query", ["where are progress bars refreshed?", "refresh", "如何优化Pandas的内存占用?",
                                   "-e refresh", "HttpClient("])
def test_ripgrep_and_fallback_give_the_same_files(repo: Path, query: str) -> None:
    with_rg = ContextFetchTool(repo).run({"query": query, "sources": ["files"]})
    without = ContextFetchTool(repo, use_ripgrep=False).run({"query": query, "sources": ["files"]})
    assert (with_rg["info"]["engine"], without["info"]["engine"]) == ("rg", "python")
    assert with_rg["sources"]["files"] == without["sources"]["files"]


@pytest.mark.parametrize("query", ["$(touch pwned)", "--pre=touch pwned", "-e `touch pwned`", "; touch pwned #"])
@pytest.mark.parametrize("use_rg", [True, False])
def test_query_is_data_through_the_tool(repo: Path, query: str, use_rg: bool) -> None:
    (repo / "weird.txt").write_text(f"x\nsearch me: {query}\n", encoding="utf-8")
    data = ContextFetchTool(repo, use_ripgrep=use_rg).run({"query": query, "sources": ["files"]})
    assert not (repo / "pwned").exists() and not Path("pwned").exists()
    top = data["sources"]["files"][0]
    assert top["path"] == "weird.txt" and top["hits"][0] == {
        "line": 2, "text": f"search me: {query}", "context_before": ["x"], "context_after": [""]}


def test_chinese_query_over_chinese_files(repo: Path) -> None:
    data = ContextFetchTool(repo).run({"query": "如何优化Pandas的内存占用?", "sources": ["files"], "glob": "*.md"})
    files = data["sources"]["files"]
    assert files[0]["path"] == "zh/内存优化.md"
    assert all(f["path"].endswith(".md") for f in files)


def test_glob_filters_files(repo: Path) -> None:
    data = ContextFetchTool(repo).run({"query": "refresh", "glob": "net/**", "sources": ["files"]})
    assert data["sources"]["files"] == []
    data = ContextFetchTool(repo).run({"query": "retries", "glob": "!net/**", "sources": ["files"]})
    assert all(not f["path"].startswith("net/") for f in data["sources"]["files"])


@pytest.mark.parametrize("budget", [60, 120, 300])
def test_files_budget_respected(repo: Path, budget: int) -> None:
    data = ContextFetchTool(repo).run({"query": "table row refresh settings", "budget_tokens": budget})
    assert _files_tokens(data["sources"]["files"]) <= budget


def _notes(repo: Path, n: int) -> None:
    notes = NoteTool.for_repo(repo)
    for i in range(n):
        notes.run({"action": "create", "title": f"retry finding {i}", "note_type": "conclusion",
                   "content": "Retries use exponential backoff with jitter. " * 30})


def test_notes_source_is_ranked_and_fits_budget_fairly(repo: Path) -> None:
    _notes(repo, 4)
    data = ContextFetchTool(repo, budget_per_source=200).run({"query": "retry backoff", "sources": ["notes"]})
    rows = data["sources"]["notes"]
    assert len(rows) == 4 and all(r["type"] == "conclusion" for r in rows)
    sizes = [estimate_tokens(note_line(r)) for r in rows]
    assert sum(sizes) <= 200 and max(sizes) - min(sizes) <= 2
    assert data["unavailable"] == {}


def test_no_state_folder_means_empty_sources_and_nothing_created(repo: Path) -> None:
    data = ContextFetchTool(repo).run({"query": "anything", "sources": ["notes", "memory", "tests"]})
    assert data["sources"]["notes"] == [] and data["sources"]["memory"] == []
    assert data["sources"]["tests"]["last_failed"]["tests"] == []
    assert not (repo / ".ctxagent").exists()


def test_memory_source_reads_the_memory_store(repo: Path) -> None:
    store_mod = pytest.importorskip("ctxagent.memory.store")
    with store_mod.MemoryStore(repo / ".ctxagent" / "memory.db") as store:
        store.add("The flaky network test needs a longer backoff", "episodic", 0.8)
        store.add("Lunch is at noon", "working", 0.2)
    data = ContextFetchTool(repo, budget_per_source=60).run({"query": "network backoff", "sources": ["memory"]})
    rows = data["sources"]["memory"]
    assert rows and "backoff" in rows[0]["content"]
    assert sum(estimate_tokens(memory_line(r)) for r in rows) <= 60


def test_missing_module_degrades_to_unavailable(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ctxagent.memory.store", None)  # as if not installed
    result = ContextFetchTool(repo).execute({"query": "table"})
    assert result.ok
    assert "memory" in result.data["unavailable"] and "memory" not in result.data["sources"]
    assert result.data["sources"]["files"][0]["path"] == "ui/table.py"
    assert "[memory] unavailable" in result.content


def test_tests_source_lists_last_failed(repo: Path) -> None:
    cache = repo / ".pytest_cache" / "v" / "cache"
    cache.mkdir(parents=True)
    (cache / "lastfailed").write_text(json.dumps({"tests/test_table.py::test_add_row": True}))
    result = ContextFetchTool(repo).execute({"query": "table", "sources": ["tests"]})
    assert result.data["sources"]["tests"]["last_failed"]["tests"] == ["tests/test_table.py::test_add_row"]
    assert "- last failed: tests/test_table.py::test_add_row" in result.content


@pytest.mark.parametrize("args,message", [
    ({"query": "   "}, "query is empty"),
    ({"query": "a\0b"}, "NUL"),
    ({"query": "x", "glob": "*.py\n--pre=sh"}, "glob must be one line"),
    ({"query": "x", "sources": ["web"]}, "sources"),
    ({"query": "x", "max_files": 0}, "max_files"),
    ({"query": "x", "budget_tokens": 5}, "budget_tokens"),
    ({}, "query"),
])
def test_bad_arguments_are_clear_errors(repo: Path, args: dict, message: str) -> None:
    tool = ContextFetchTool(repo)
    result = tool.execute(args)
    assert not result.ok and message in result.content
    with pytest.raises(ToolInputError):
        tool.run(args)


def test_missing_workspace_is_an_error(tmp_path: Path) -> None:
    result = ContextFetchTool(tmp_path / "nope").execute({"query": "x"})
    assert not result.ok and "is not a folder" in result.content


def test_schema_names_the_tool_and_its_sources() -> None:
    schema = ContextFetchTool().schema()["function"]
    assert schema["name"] == "context_fetch"
    assert "files" in json.dumps(schema["parameters"]) and "query" in schema["parameters"]["required"]


def test_the_lines_shown_for_a_file_never_repeat_a_line() -> None:
    """New-user trial: hits on lines 1 and 4 showed lines 2-3 twice (context of both)."""
    from ctxagent.fetch.hits import CONTEXT_LINES, make_hit, select_lines

    lines = [f"def parse_cfg_{i}(value): return value" if i in (0, 3, 6, 20) else f"x = {i}" for i in range(30)]
    chosen = select_lines(lines, "parse_cfg", [], [1, 4, 7, 21], limit=5)
    shown = [n for index in chosen for n in range(max(0, index - CONTEXT_LINES), index + CONTEXT_LINES + 1)]
    assert len(shown) == len(set(shown)), chosen
    assert chosen[0] == 0 and 20 in chosen
    hits = [make_hit(lines, index) for index in chosen]
    numbers = [h["line"] - len(h["context_before"]) + k for h in hits
               for k in range(len(h["context_before"]) + 1 + len(h["context_after"]))]
    assert len(numbers) == len(set(numbers))
