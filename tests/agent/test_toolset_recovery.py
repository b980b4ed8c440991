"""A damaged or unusable memory.db / knowledge base never blocks a run (breaker F10).

Damaged (garbage, truncated): set aside as `<name>.corrupt-<stamp>`, recreated, one warning,
the tool works. Unusable (written by a newer ctxagent): left untouched, the tool is an
`UnavailableTool` (same name and schema, every call fails with the reason), one warning,
and each request reports the memory source as unavailable. Real loop, fake model only.
"""

from __future__ import annotations

import json
import sqlite3
import warnings
from pathlib import Path

import pytest

from ctxagent.agent.runtime import open_agent
from ctxagent.agent.toolset import build_registry
from ctxagent.config.settings import Settings
from ctxagent.context.record.snapshot import load_snapshot_file
from ctxagent.memory import MemoryStore
from ctxagent.rag.store import KnowledgeBase
from ctxagent.tools.memory import MemoryTool
from ctxagent.tools.rag import RAGTool
from ctxagent.tools.unavailable import UnavailableTool
from tests.agent.test_runtime import settings_for
from tests.support.cli import invoke
from tests.support.fake_openai import text, tool_calls

DB = {"memory": ".ctxagent/memory.db", "rag": ".ctxagent/knowledge/rag_knowledge_base.db"}


def damage(repo: Path, kind: str) -> bytes:
    path = repo / DB[kind]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"garbage\n")
    return path.read_bytes()


def from_the_future(repo: Path, kind: str) -> bytes:
    path = repo / DB[kind]
    path.parent.mkdir(parents=True, exist_ok=True)
    (MemoryStore(path, embedder=None) if kind == "memory" else KnowledgeBase(path)).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO _migrations VALUES ('m099_future', 0)")
    conn.commit()
    conn.close()
    return path.read_bytes()


def registry_with_warnings(repo: Path) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = build_registry(repo, Settings(model={"model": "m"}))
    # ResourceWarning: Python 3.13 reports connections of earlier tests when they are collected here
    return registry, [str(w.message) for w in caught if not issubclass(w.category, ResourceWarning)]


@pytest.mark.parametrize("kind", sorted(DB))
def test_F10_a_damaged_database_is_recreated_and_the_tool_works(tmp_path: Path, kind: str) -> None:
    bad = damage(tmp_path, kind)
    registry, messages = registry_with_warnings(tmp_path)
    tool = registry.get(kind)
    assert isinstance(tool, MemoryTool if kind == "memory" else RAGTool)
    assert len(messages) == 1 and "damaged" in messages[0]
    [aside] = (tmp_path / DB[kind]).parent.glob("*.corrupt-*")
    assert aside.read_bytes() == bad
    args = {"action": "add", "content": "x"} if kind == "memory" else {"action": "add_text", "text": "x"}
    assert tool.execute(args).ok


@pytest.mark.parametrize("kind", sorted(DB))
def test_F10_a_database_of_a_newer_ctxagent_becomes_an_unavailable_tool(tmp_path: Path, kind: str) -> None:
    before = from_the_future(tmp_path, kind)
    registry, messages = registry_with_warnings(tmp_path)
    tool = registry.get(kind)
    real = MemoryTool if kind == "memory" else RAGTool
    assert isinstance(tool, UnavailableTool) and tool.available is False
    assert tool.schema() == real.schema(real.__new__(real))  # the model's tool list does not change
    assert len(messages) == 1 and "unavailable" in messages[0] and "upgrade ctxagent" in messages[0]
    result = tool.execute({"action": "search", "query": "x"})
    assert not result.ok and "unavailable in this session" in result.content and "m099_future" in result.content
    assert (tmp_path / DB[kind]).read_bytes() == before
    assert not list((tmp_path / DB[kind]).parent.glob("*.corrupt-*"))


def test_F10_a_run_goes_on_without_memory_and_reports_it_unavailable(tmp_path: Path, fake_openai) -> None:
    before = from_the_future(tmp_path, "memory")
    server = fake_openai([tool_calls([("memory", json.dumps({"action": "search", "query": "x"}))]), text("done")])
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        with open_agent(tmp_path, settings_for(server)) as agent:
            end = agent.run_turn("what do you remember?")
    assert end.reason == "finished" and end.answer == "done"
    names = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert "memory" in names
    tool_message = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][0]
    assert "unavailable in this session" in tool_message["content"]
    snapshot = load_snapshot_file(tmp_path / ".ctxagent" / "snapshots" / agent.session.id / "1.json")
    assert any("memory" in p and "unavailable" in p for p in snapshot["report"]["problems"])
    assert (tmp_path / DB["memory"]).read_bytes() == before  # no episodic memory forced into it


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))


@pytest.mark.usefixtures("cli_env")
@pytest.mark.parametrize("kind", sorted(DB))
@pytest.mark.parametrize("broken", ["damaged", "newer"])
def test_F10_ctxagent_run_is_never_blocked_by_the_memory_or_rag_database(tmp_path: Path, fake_openai, kind: str,
                                                                         broken: str) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (damage if broken == "damaged" else from_the_future)(repo, kind)
    server = fake_openai([text("hi")])
    out = invoke(["run", "x", "--repo", str(repo), "--provider", "custom", "--base-url", server.base_url,
                  "--model", "fake"])
    assert out.exit_code == 0, out.output
    assert "hi" in out.stdout and len(server.requests) == 1
    assert ("damaged" if broken == "damaged" else "unavailable") in out.stderr


@pytest.mark.usefixtures("cli_env")
def test_F10_the_memory_command_recovers_a_damaged_db_and_refuses_a_newer_one_clearly(tmp_path: Path) -> None:
    damage(tmp_path, "memory")
    out = invoke(["memory", "list", "--repo", str(tmp_path)])
    assert out.exit_code == 0 and "damaged" in out.stderr and "corrupt-" in out.stderr
    out = invoke(["memory", "list", "--repo", str(tmp_path)])
    assert out.exit_code == 0 and "damaged" not in out.stderr
    other = tmp_path / "other"
    other.mkdir()
    before = from_the_future(other, "memory")
    out = invoke(["memory", "list", "--repo", str(other)])
    assert out.exit_code == 1 and "upgrade ctxagent" in out.output and "Traceback" not in out.output
    assert (other / DB["memory"]).read_bytes() == before
