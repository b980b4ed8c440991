"""The inspector's layer chart: fixed parts shown as fixed, the tool schemas as their own
line, rows that add up to the input budget and a caption on the unused room; snapshots
written by older versions still display. The end-to-end case runs the real loop and
client against the fake OpenAI server; nothing of ours is mocked."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from ctxagent.agent.runtime import open_agent
from ctxagent.cli.main import cli, register_commands
from ctxagent.config.settings import Settings
from ctxagent.context import ContextBuilder, ContextConfig, ContextPacket, TokenCounter
from ctxagent.context.record.snapshot import write_snapshot
from ctxagent.llm.settings import ModelSettings
from ctxagent.storage.files import state_dir
from ctxagent.validation import Secret
from tests.support.fake_openai import text

ROW = re.compile(r"^(?P<name>[a-z_][a-z_ +]*?) +(?P<tokens>-?\d+)(?: +(?P<budget>-?\d+))?(?=\s|$)")
TOOLS = [{"type": "function", "function": {"name": "terminal", "description": "Run a read-only command.",
                                           "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]


def inspect(repo: Path, *args: str) -> str:
    result = CliRunner().invoke(register_commands(cli), ["inspect", *args, "--repo", str(repo)])
    assert result.exit_code == 0, result.output
    return result.output


def chart(output: str) -> dict[str, tuple[int, int | None, str]]:
    """The layer chart's rows: name -> (tokens, budget or None, rest of the line), from the
    "layer tokens budget" header to the "input budget" row."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"^layer +tokens +budget", line))
    rows = {}
    for line in lines[start + 1:]:
        found = ROW.match(line)
        if not found:
            break
        budget = found["budget"]
        rows[found["name"]] = (int(found["tokens"]), None if budget is None else int(budget), line[found.end():])
        if found["name"] == "input budget":
            break
    return rows


def assert_rows_add_up(rows: dict[str, tuple[int, int | None, str]]) -> None:
    total, budget, _ = rows.pop("input budget")
    assert total == budget
    assert sum(tokens for tokens, _, _ in rows.values()) == total, rows
    assert sum(b or 0 for _, b, _ in rows.values()) == total, rows


def test_the_chart_of_a_builder_call_marks_fixed_parts_and_adds_up(tmp_path: Path) -> None:
    packets = [ContextPacket("The release tag is v9-TEST", metadata={"type": "note", "id": "note-release"})]
    builder = ContextBuilder(config=ContextConfig(max_tokens=2000), model="gpt-4o")
    messages, report = builder.build_messages("What is the release tag?", system_instructions="Be brief.",
                                              custom_packets=packets, tools=TOOLS)
    write_snapshot(state_dir(tmp_path), "s1", 1, {"model": "gpt-4o", "messages": messages, "tools": TOOLS}, report)
    output = inspect(tmp_path, "s1")
    rows = chart(output)
    assert list(rows) == ["system", "tools", "memory", "evidence", "history", "tool_results", "current", "unused",
                          "input budget"]
    tools = TokenCounter("gpt-4o").count_tools(TOOLS)
    for name in ("system", "tools", "current"):
        assert "fixed" in rows[name][2] and "█" not in rows[name][2], "a fixed part is no filled budget"
    assert rows["tools"][:2] == (tools, tools)
    for name in ("memory", "history", "tool_results"):
        assert rows[name][0] == 0 < rows[name][1], "an empty layer keeps its budget"
    assert rows["unused"][0] == report["budget"]["input_budget"] - report["budget"]["used_tokens"]
    assert_rows_add_up(rows)
    caption = " ".join(output.split())
    assert f"unused {rows['unused'][0]} tokens: left by layers under their budget: memory" in caption


def test_a_layer_over_its_budget_says_by_how_much(tmp_path: Path) -> None:
    shares = {"system": 0.1, "memory": 0.3, "evidence": 0.02, "history": 0.3, "tool_results": 0.3, "current": 0.1}
    packets = [ContextPacket(f"Release fact {i}: the tag is v9-TEST. " * 5, metadata={"type": "note", "id": f"n{i}"})
               for i in range(3)]
    builder = ContextBuilder(config=ContextConfig(max_tokens=2000, layer_shares=shares, adaptive_layers=False), model="gpt-4o")
    messages, report = builder.build_messages("What is the release tag?", custom_packets=packets)
    write_snapshot(state_dir(tmp_path), "s1", 1, {"model": "gpt-4o", "messages": messages}, report)
    rows = chart(inspect(tmp_path, "s1"))
    tokens, budget, rest = rows["evidence"]
    assert tokens > budget and f"▓ +{tokens - budget} " in rest
    assert_rows_add_up(rows)


def test_a_snapshot_written_by_an_older_version_still_displays(tmp_path: Path) -> None:
    """The layer figures before fixed parts were marked: budget == used for system and current,
    the tool schemas inside current, no unused figures."""
    report = {"version": 1, "mode": "messages", "model": "gpt-4o", "exact": True, "query": "What is the tag?",
              "query_type": "general",
              "budget": {"max_tokens": 1000, "reserve_tokens": 150, "input_budget": 850, "fixed_tokens": 135,
                         "tools_tokens": 103, "used_tokens": 300},
              "layers": {"system": {"budget": 3, "used": 3}, "memory": {"budget": 89, "used": 0},
                         "evidence": {"budget": 268, "used": 165}, "history": {"budget": 268, "used": 0},
                         "tool_results": {"budget": 89, "used": 0}, "current": {"budget": 132, "used": 132}},
              "sources": {}, "packets": [{"id": "tag", "layer": "evidence", "type": "note", "source": "custom",
                                          "tokens": 165, "relevance": 1.0, "recency": 1.0, "score": 1.0, "pinned": False,
                                          "decision": "selected", "reason": "fits its layer budget", "preview": "v9"}],
              "final_fit_dropped": []}
    folder = state_dir(tmp_path) / "snapshots" / "old"
    folder.mkdir(parents=True)
    (folder / "1.json").write_text(json.dumps({"session_id": "old", "call": 1, "created_at": "2024-01-01T00:00:00Z",
                                               "request": {"model": "gpt-4o", "messages": []}, "report": report}))
    output = inspect(tmp_path, "old")
    rows = chart(output)
    assert {n: r[:2] for n, r in rows.items()} == {n: (e["used"], e["budget"]) for n, e in report["layers"].items()}
    assert "written by an older ctxagent" in " ".join(output.split())
    assert json.loads(inspect(tmp_path, "old", "--json"))["report"]["layers"] == report["layers"]


def test_an_agent_call_shows_its_tool_schemas_and_adds_up(tmp_path: Path, fake_openai) -> None:
    server = fake_openai([text("It is v9-TEST.")])
    settings = Settings(model=ModelSettings(provider="custom", model="gpt-4o-mini", base_url=server.base_url,
                                            api_key=Secret("sk-test-abcdef0123456789"), max_retries=0, timeout_s=10,
                                            context_window=32_000, max_output_tokens=1000))
    with open_agent(tmp_path, settings) as agent:
        agent.run_turn("What is the release tag?")
    sent_tools = server.requests[0]["tools"]
    output = inspect(tmp_path, "last")
    rows = chart(output)
    assert list(rows)[:3] == ["system", "tools", "state"] and "history + tool_results" in rows
    tools = TokenCounter("gpt-4o-mini").count_tools(sent_tools)
    assert rows["tools"][:2] == (tools, tools) and tools > 1000, "the tool schemas, several thousand tokens"
    assert rows["input budget"][0] == 31_000
    history, room, _ = rows["history + tool_results"]
    assert 0 < history < room
    assert_rows_add_up(rows)
