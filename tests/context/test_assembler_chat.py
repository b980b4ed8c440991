"""The assembler inside a real Agent (real client, fake server): automatic compaction
recorded in the transcript, `/compact [focus]` and `/context`."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from ctxagent.agent.loop import Agent
from ctxagent.agent.session import Session
from ctxagent.agent.wiring import make_assembler
from ctxagent.cli.context_chat import compact_command, context_command
from ctxagent.cli.render import RichRenderer
from ctxagent.cli.slash import ChatContext, dispatch
from ctxagent.config.settings import Settings
from ctxagent.llm.client import LLMClient
from ctxagent.llm.settings import ModelSettings
from ctxagent.storage.files import read_jsonl
from ctxagent.tools.base import Tool, ToolParams, ToolRegistry, ToolResult
from ctxagent.validation import Secret
from tests.context.long_history import C03_TASK
from tests.support.fake_openai import text, tool_calls

KEY = "sk-test-SECRET-abcdef0123456789"


class ReadParams(ToolParams):
    path: str


class ReadTool(Tool):
    """Returns 3,000 characters for any path (a stand-in for reading a large file)."""

    name = "read"
    description = "Read a file."
    Params = ReadParams

    def _run(self, params: ReadParams) -> ToolResult:
        line = f"def parse_cfg():  # in {params.path}\n"
        return ToolResult(ok=True, content=(line * 100)[:3000])


@pytest.fixture
def agent(tmp_path, fake_openai):
    script = [tool_calls([("read", json.dumps({"path": f"src/m{i}.py"}))]) for i in range(12)]
    server = fake_openai([*script, text("Renamed everywhere.")])
    model = ModelSettings(provider="custom", model="gpt-4o-mini", base_url=server.base_url, api_key=Secret(KEY),
                          context_window=6000, max_output_tokens=1000, max_retries=0, timeout_s=10)
    settings = Settings(model=model)
    registry = ToolRegistry()
    registry.register(ReadTool())
    session = Session.create(tmp_path, secrets=settings.secrets())
    client = LLMClient(model)
    agent = Agent(client=client, registry=registry, session=session, settings=settings, system="You are a test agent.",
                  assembler=make_assembler(settings, tmp_path, session))  # extractive: the script is the loop's
    yield agent
    client.close()


def _events(agent, kind):
    return [r["event"] for r in read_jsonl(agent.session.path) if r.get("kind") == "event" and r["event"]["type"] == kind]


def test_automatic_compaction_is_recorded_with_what_it_dropped(agent):
    end = agent.run_turn(C03_TASK)
    assert end.reason == "finished"
    compactions = _events(agent, "compaction")
    assert compactions, "the long turn compacted (as often as it needed: issue 16)"
    for event in compactions:
        details = event["details"]
        assert details["trigger"] == "auto" and details["method"] in ("masking", "extractive")
        assert details["tokens_after"] < details["tokens_before"] and (details["dropped"] or details["masked"])
    snapshots = sorted((agent.session.repo / ".ctxagent" / "snapshots" / agent.session.id).glob("*.json"))
    assert len(snapshots) == 13, "one snapshot per model call"
    assert KEY not in "".join(p.read_text() for p in snapshots)


def test_compact_command_with_focus(agent):
    agent.run_turn(C03_TASK)
    before = len(agent.session.history)
    result = compact_command(agent, "the release tag v9-TEST")
    record = result["record"]
    assert record.trigger == "manual" and record.focus == "the release tag v9-TEST"
    assert len(agent.session.history) < before
    assert agent.session.history[0]["content"] == C03_TASK
    summary = next(m["content"] for m in agent.session.history if "[Context summary" in str(m.get("content")))
    assert "the release tag v9-TEST" in summary


def test_context_command_previews_without_changing_anything(agent):
    agent.run_turn(C03_TASK)
    records = list(agent.assembler.records)
    report = context_command(agent)
    assert report["mode"] == "assembler" and report["packets"]
    assert report["budget"]["used_tokens"] <= report["budget"]["input_budget"]
    assert agent.assembler.records == records


def test_slash_commands_render(agent):
    agent.run_turn(C03_TASK)
    out = io.StringIO()
    console = Console(file=out, width=160)
    ctx = ChatContext(agent=agent, console=console)
    agent.sinks.append(RichRenderer(console))  # as chat does: the renderer shows the compaction event
    dispatch("/context", ctx)
    dispatch("/compact keep the tag", ctx)
    printed = out.getvalue()
    assert "next model call" in printed and "tool_results" in printed
    # one line for the compaction, saying how (tester finding 11: two lines with different counts)
    lines = [line for line in printed.splitlines() if line.startswith("compacted")]
    assert len(lines) == 1 and lines[0].startswith("compacted on request (extractive, ") and "tokens)" in lines[0], printed
    assert _events(agent, "compaction")[-1]["method"] == "extractive"


def test_a_resumed_session_goes_on_from_its_compacted_history(agent):
    """Tester finding 4: after /compact, resume reloaded the whole history and compacted it again."""
    agent.run_turn(C03_TASK)
    compact_command(agent, "keep the tag")
    resumed = Session.resume(agent.session.repo, agent.session.id)
    assert resumed.history == agent.session.history
    from ctxagent.context.compaction.sections import is_summary_message

    recorded = [r for r in read_jsonl(agent.session.path) if r.get("kind") == "message"]
    assert len(resumed.history) < len(recorded) and any(is_summary_message(m) for m in resumed.history)
