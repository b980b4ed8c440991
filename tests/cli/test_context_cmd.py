"""`ctxagent context QUERY` and `ctxagent inspect SESSION` (the context inspector)."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from ctxagent.cli import context_cmd
from ctxagent.cli.main import cli, register_commands
from ctxagent.context import ContextBuilder, ContextConfig, ContextPacket
from ctxagent.context.snapshot import write_snapshot
from ctxagent.storage import state_dir


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    root = tmp_path / "repo"
    root.mkdir()
    (root / "AGENTS.md").write_text("# Rules\nAlways call parse_config, never parse_cfg.\n")
    return root


def invoke(args: list[str]):
    return CliRunner().invoke(register_commands(cli), args)


def snapshot_call(repo: Path, session: str, n: int) -> None:
    packets = [ContextPacket("The release tag is v9-TEST", metadata={"type": "note", "id": "note-release"}),
               ContextPacket("Weather report for Paris " * 200, metadata={"type": "rag", "id": "weather"}, relevance_score=0.05)]
    builder = ContextBuilder(config=ContextConfig(max_tokens=1000, min_relevance=0.1))
    messages, report = builder.build_messages("What is the release tag?", system_instructions="Be brief.", custom_packets=packets)
    write_snapshot(state_dir(repo), session, n, {"model": "gpt-4o", "messages": messages}, report)


def test_register_adds_both_commands() -> None:
    group = click.Group("g")
    context_cmd.register(group)
    assert {"context", "inspect"} <= set(group.commands)


def test_context_prints_sections_and_the_report(repo: Path) -> None:
    result = invoke(["context", "Where is parse_cfg defined?", "--repo", str(repo), "--max-tokens", "2000"])
    assert result.exit_code == 0, result.output
    for section in ("[Role & Policies]", "[Task]", "[State]", "[Evidence]", "[Context]", "[Output]"):
        assert section in result.output
    assert "Always call parse_config" in result.output
    assert "input tokens" in result.output and "evidence" in result.output


def test_context_json_and_messages(repo: Path) -> None:
    result = invoke(["context", "Where is parse_cfg?", "--repo", str(repo), "--json", "--messages", "--model", "gpt-4o"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["messages"][0]["role"] == "system" and "parse_config" in data["messages"][0]["content"]
    assert data["messages"][-1]["content"].endswith("Where is parse_cfg?")
    assert data["report"]["exact"] is True and data["report"]["sources"]["agents_md"] == {"ok": True, "items": 1}


def test_inspect_last_shows_layers_and_decisions(repo: Path) -> None:
    snapshot_call(repo, "20240101-120000-aaaa", 0)
    snapshot_call(repo, "20240101-120000-aaaa", 1)
    result = invoke(["inspect", "last", "--repo", str(repo)])
    assert result.exit_code == 0, result.output
    assert "20240101-120000-aaaa" in result.output and "call 1 of 0..1" in result.output
    for layer in ("system", "evidence", "current"):
        assert layer in result.output
    assert "selected" in result.output and "dropped" in result.output


def test_inspect_grep_answers_why_the_model_did_not_see_it(repo: Path) -> None:
    snapshot_call(repo, "s1", 0)
    result = invoke(["inspect", "s1", "--call", "0", "--repo", str(repo), "--grep", "Weather"])
    assert result.exit_code == 0, result.output
    assert "does not appear" in result.output and "min_relevance" in result.output
    data = json.loads(invoke(["inspect", "s1", "--repo", str(repo), "--grep", "v9-TEST", "--json"]).output)
    assert data["grep"] == {"text": "v9-TEST", "in_request": True}
    assert [r["id"] for r in data["report"]["packets"]] == ["note-release"]


def test_inspect_without_snapshots_is_a_clear_error(repo: Path) -> None:
    result = invoke(["inspect", "last", "--repo", str(repo)])
    assert result.exit_code == 1
    assert "no snapshots" in result.output and "Traceback" not in result.output
