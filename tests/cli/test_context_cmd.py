"""`ctxagent context QUERY` and `ctxagent inspect SESSION` (the context inspector)."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from ctxagent.cli import context_cmd
from ctxagent.cli.main import cli, register_commands, run_cli
from ctxagent.context import ContextBuilder, ContextConfig, ContextPacket
from ctxagent.context.record.snapshot import write_snapshot
from ctxagent.storage.files import state_dir


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
    assert data["grep"] == {"text": "v9-TEST", "in_request": True, "in_side_calls": [], "in_summary_calls": []}
    assert [r["id"] for r in data["report"]["packets"]] == ["note-release"]


def test_inspect_without_snapshots_is_a_clear_error(repo: Path) -> None:
    result = invoke(["inspect", "last", "--repo", str(repo)])
    assert result.exit_code == 1
    assert "no snapshots" in result.output and "Traceback" not in result.output


# -- damaged snapshots: a clear error when asked for, a fallback for "last" -----------------------

@pytest.mark.parametrize("content", ["[]", '{"report": []}', '{"report": {"packets": [1]}}', "{trunc"])
def test_inspect_of_a_damaged_call_is_a_clear_error(repo: Path, capsys, content: str) -> None:
    snapshot_call(repo, "s1", 1)
    (state_dir(repo) / "snapshots" / "s1" / "2.json").write_text(content)
    assert run_cli(["inspect", "s1", "--call", "2", "--repo", str(repo)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: snapshot ") and "2.json" in err and "damaged" in err and err.count("\n") == 1
    assert "crashed" not in err


def test_inspect_last_skips_a_damaged_newest_call_with_one_warning(repo: Path, capsys) -> None:
    for n in (1, 2, 3):
        snapshot_call(repo, "s1", n)
    damaged = state_dir(repo) / "snapshots" / "s1" / "3.json"
    damaged.write_text(damaged.read_text()[:100])  # cut short, as by a crash or a full disk
    assert run_cli(["inspect", "last", "--repo", str(repo)]) == 0
    out, err = capsys.readouterr()
    assert "call 2 of 1..3" in out and "selected" in out
    [line] = err.splitlines()
    assert line.startswith("warning: ") and str(damaged) in line and "call 2" in line
    assert run_cli(["inspect", "last", "--repo", str(repo), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["call"] == 2


# -- what else the snapshot says: parameters, redaction, the compaction's summary call ------------

def test_inspect_shows_the_parameters_redaction_and_summary_calls(repo: Path) -> None:
    messages, report = ContextBuilder(config=ContextConfig(max_tokens=1000)).build_messages("hi")
    request = {"model": "gpt-4o", "messages": messages, "tools": [], "max_tokens": 256, "temperature": 0.2,
               "stream": True, "stream_options": {"include_usage": True}}
    summary = {"trigger": "manual", "tokens": 1234, "request": {"model": "gpt-4o", "messages": [{}, {}]},
               "error": "ServerError: boom"}
    write_snapshot(state_dir(repo), "s1", 1, request, report, summary_calls=[summary])
    leaky = [*messages[:-1], {**messages[-1], "content": "hi, my key is sk-abcdefghijklmnopqrstuvwxyz0123"}]
    write_snapshot(state_dir(repo), "s1", 2, {**request, "messages": leaky}, report,
                   summary_calls=[{**summary, "trigger": "auto", "error": None}])
    result = invoke(["inspect", "s1", "--call", "1", "--repo", str(repo)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert 'request model gpt-4o, max_tokens=256 temperature=0.2 stream=true stream_options={"include_usage": true}' in text
    assert "compaction summary call (manual): 2 messages, 1234 tokens, failed: ServerError: boom" in text
    assert "[REDACTED]" not in text
    text = " ".join(invoke(["inspect", "s1", "--call", "2", "--repo", str(repo)]).output.split())
    assert "secrets in this snapshot were replaced by [REDACTED]" in text
    assert "compaction summary call (auto): 2 messages, 1234 tokens ─" in text


def test_inspect_grep_finds_history_by_the_whole_message_in_the_transcript(repo: Path) -> None:
    """Tester finding 2: a fact past a row's 200-character preview (a `cat` result that was
    trimmed) was reported as mentioned by no packet."""
    from ctxagent.agent.session import Session
    from ctxagent.context.assembler import ContextAssembler
    from ctxagent.llm.settings import ModelSettings

    session = Session.create(repo)
    call = {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "cat click/core.py"}'}}
    messages = [{"role": "user", "content": "Why does the context manager leak?"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "import os\n" * 150 + "with ExitStack() as stack:\n" + "import sys\n" * 300},
                {"role": "assistant", "content": "It is opened in core.py."},
                {"role": "user", "content": "And now?"}]
    for message in messages:
        session.add_message(message)
    assembler = ContextAssembler(ModelSettings(model="gpt-4o-mini", context_window=700, max_output_tokens=100),
                                 load_state=None)
    system = {"role": "system", "content": "You are a coding agent."}
    assembler.assemble([system, *messages], [], {"repo": str(repo), "session_id": session.id, "turn": 2})
    data = json.loads(invoke(["inspect", "last", "--repo", str(repo), "--grep", "ExitStack", "--json"]).output)
    assert data["grep"]["in_request"] is False
    rows = {r["id"]: r for r in data["report"]["packets"]}
    assert "msg3" in rows and rows["msg3"]["decision"] != "selected", rows
    data = json.loads(invoke(["inspect", "last", "--repo", str(repo), "--grep", "click/core.py", "--json"]).output)
    assert "msg2" in {r["id"] for r in data["report"]["packets"]}, "the call that read it, by its arguments"


OLD_SNAPSHOT = {  # as an older ctxagent wrote it: no kind, no side calls, layers without "fixed"
    "version": 1, "session": "s1", "call": 1, "created_at": "2024-01-01T12:00:00+00:00",
    "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "What is the release tag?"}]},
    "report": {"call": 1, "query": "What is the release tag?", "budget": {"max_tokens": 1000, "input_budget": 800},
               "layers": {"system": {"budget": 10, "used": 10}, "current": {"budget": 12, "used": 12}},
               "packets": [{"id": "msg1", "layer": "current", "decision": "selected", "reason": "current request"}],
               "sources": {}}}


def test_old_snapshots_still_display_beside_plan_calls(repo: Path) -> None:
    """A session folder from before plan calls had snapshots: shown as before, no plan
    lines; a plan call written after it is listed with it and shown on its own."""
    from ctxagent.context.record.snapshot import write_side_snapshot

    folder = state_dir(repo) / "snapshots" / "s1"
    folder.mkdir(parents=True)
    (folder / "1.json").write_text(json.dumps(OLD_SNAPSHOT), encoding="utf-8")
    result = invoke(["inspect", "s1", "--repo", str(repo)])
    assert result.exit_code == 0, result.output
    assert "call 1 of 1..1" in result.output and "plan call" not in result.output
    assert "written by an older ctxagent" in " ".join(result.output.split())
    data = json.loads(invoke(["inspect", "s1", "--repo", str(repo), "--grep", "release", "--json"]).output)
    assert data["grep"] == {"text": "release", "in_request": True, "in_side_calls": [], "in_summary_calls": []} and "side_calls" not in data

    details = {"made_for": {"call": 1, "turn": 1, "step": 1, "tool": "plan", "tool_call_id": "c1", "attempt": 1},
               "tokens": 40, "usage": {"prompt_tokens": 41, "completion_tokens": 9, "cost_usd": 0.0012}}
    write_side_snapshot(state_dir(repo), "s1", 2, "plan", {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "Plan the [bold]release[/bold] of v9"}], "max_tokens": 50}, details)
    text = " ".join(invoke(["inspect", "s1", "--call", "1", "--repo", str(repo)]).output.split())
    assert ("plan call 2, made for this call's tool call c1 (attempt 1): 1 message(s), 40 tokens, "
            "usage 41 prompt + 9 completion tokens, $0.0012") in text
    text = " ".join(invoke(["inspect", "s1", "--repo", str(repo)]).output.split())
    assert "call 2 of 1..2" in text and "user: Plan the [bold]release[/bold] of v9" in text, "markup shown as text"
    assert "request model gpt-4o, max_tokens=50" in text and "input budget" not in text


def test_inspect_grep_finds_summary_calls_kept_in_main_calls(repo: Path) -> None:
    """Summary calls stored in a main call's `summary_calls` (an automatic compaction's, and
    in snapshots written before on-demand ones had files of their own, a /compact's) are
    searched too: --grep names the call that keeps each and how to open it. Such an old
    snapshot displays as before."""
    messages, report = ContextBuilder(config=ContextConfig(max_tokens=1000)).build_messages("hi")
    request = {"model": "gpt-4o", "messages": messages}
    asked = {"model": "gpt-4o", "messages": [{"role": "system", "content": "You are compacting"},
                                             {"role": "user", "content": "### Tool result\nONLY-IN-SUMMARY-42"}]}
    write_snapshot(state_dir(repo), "s1", 1, request, report)
    write_snapshot(state_dir(repo), "s1", 2, request, report, summary_calls=[
        {"trigger": "manual", "tokens": 30, "request": {"model": "gpt-4o", "messages": [{}, {}]}},
        {"trigger": "manual", "tokens": 30, "request": asked, "usage": {"prompt_tokens": 31, "completion_tokens": 4}}])
    write_snapshot(state_dir(repo), "s1", 3, request, report, summary_calls=[{"trigger": "auto", "tokens": 30,
                                                                             "request": asked}])
    text = " ".join(invoke(["inspect", "s1", "--call", "2", "--repo", str(repo)]).output.split())
    assert "compaction summary call (manual): 2 messages, 30 tokens, usage 31 prompt + 4 completion tokens" in text
    assert "summary call 3" not in text, "a main call is not listed as a side call"

    result = invoke(["inspect", "s1", "--call", "3", "--repo", str(repo), "--grep", "only-in-summary-42"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "only-in-summary-42 does not appear in the request sent to the model" in text
    assert ("only-in-summary-42 appears in the request of compaction summary call 2 (manual) kept in the snapshot "
            "of call 2: ctxagent inspect s1 --call 2 --json (its summary_calls)") in text
    assert ("only-in-summary-42 appears in the request of compaction summary call 1 (auto) kept in this call's "
            "snapshot: ctxagent inspect s1 --call 3 --json (its summary_calls)") in text
    data = json.loads(invoke(["inspect", "s1", "--call", "1", "--repo", str(repo), "--grep", "ONLY-IN-SUMMARY",
                              "--json"]).output)
    assert data["grep"]["in_side_calls"] == [] and data["grep"]["in_summary_calls"] == [
        {"call": 2, "index": 1, "trigger": "manual"}, {"call": 3, "index": 0, "trigger": "auto"}]


def test_inspect_grep_finds_a_summary_row_by_its_whole_text(repo: Path) -> None:
    """New-user finding: a compaction summary row's preview stops at 200 characters, so a
    fact later in the summary the model was sent was not reported as mentioned by it."""
    summary = {"role": "user", "content": "[Compaction summary]\n## Goal\n" + "Rename the loader. " * 12
               + "\n## Key facts\n- the release tag is v9-TEST"}
    task = {"role": "user", "content": "Rename the loader."}
    messages = [{"role": "system", "content": "You are a coding agent."}, task, {"role": "assistant", "content": "Ok."},
                summary, {"role": "assistant", "content": "Ok."}, {"role": "user", "content": "Go on."}]
    from ctxagent.context.record.report import message_preview

    rows = [{"id": "msg0", "layer": "history", "type": "history", "decision": "selected", "reason": "the task",
             "preview": message_preview(task)},
            {"id": "summary0", "layer": "history", "type": "summary", "decision": "selected",
             "reason": "compaction summary", "preview": message_preview(summary)}]
    assert "v9-TEST" not in rows[1]["preview"]
    report = {"call": 1, "query": "Go on.", "budget": {"max_tokens": 4000, "input_budget": 3000},
              "layers": {"history": {"budget": 2000, "used": 300}}, "packets": rows, "sources": {}}
    write_snapshot(state_dir(repo), "s1", 1, {"model": "gpt-4o", "messages": messages}, report)
    data = json.loads(invoke(["inspect", "s1", "--repo", str(repo), "--grep", "v9-test", "--json"]).output)
    assert data["grep"]["in_request"] is True
    assert [r["id"] for r in data["report"]["packets"]] == ["summary0"]
    text = " ".join(invoke(["inspect", "s1", "--repo", str(repo), "--grep", "v9-TEST"]).output.split())
    assert "1 packet(s) mention it" in text and "compacted away" not in text
