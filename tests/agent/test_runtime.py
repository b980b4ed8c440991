"""`open_agent` wires the real parts: model client, session, the full tool set, the
context engine's assembler (with model summaries) and compaction events that reach every
sink. Real loop + real client against the fake OpenAI server; nothing of ours is mocked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxagent.agent.runtime import open_agent
from ctxagent.config.settings import Settings
from ctxagent.context.assembler import ContextAssembler
from ctxagent.context.record.snapshot import load_snapshot_file
from ctxagent.llm.settings import ModelSettings
from ctxagent.storage.files import read_jsonl
from ctxagent.tools.memory import MemoryTool
from ctxagent.tools.notes import NoteTool
from ctxagent.tools.todo import TodoTool
from ctxagent.validation import Secret
from tests.support.fake_openai import error, text, tool_calls

KEY = "sk-test-SECRET-abcdef0123456789"
TOO_LONG = error(400, {"error": {"message": "This model's maximum context length is 8192 tokens. However, your "
                                            "messages resulted in 9000 tokens.", "type": "invalid_request_error",
                                 "code": "context_length_exceeded"}})


def settings_for(server, **model: object) -> Settings:
    opts = {"context_window": 128_000, "max_output_tokens": 1000, **model}
    return Settings(model=ModelSettings(provider="custom", model="gpt-4o-mini", base_url=server.base_url,
                                        api_key=Secret(KEY), max_retries=0, timeout_s=10, **opts))


def big_repo(root: Path, files: int = 12) -> Path:
    (root / "src").mkdir()
    for i in range(files):
        line = f"def parse_cfg_{i}(value):  # helper {i} of the config parser\n"
        (root / "src" / f"m{i}.py").write_text((line * 80)[:3000], encoding="utf-8")
    return root


def transcript_events(agent, kind: str) -> list[dict]:
    return [r["event"] for r in read_jsonl(agent.session.path)
            if r.get("kind") == "event" and r["event"]["type"] == kind]


def test_open_agent_uses_the_context_engine_with_the_full_tool_set(tmp_path, fake_openai) -> None:
    server = fake_openai([text("hello")])
    events: list = []
    with open_agent(tmp_path, settings_for(server), sinks=[events.append]) as agent:
        assert isinstance(agent.assembler, ContextAssembler) and agent.assembler.summarize is not None
        end = agent.run_turn("hi")
    assert end.answer == "hello"
    sent = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert {"terminal", "apply_patch", "context_fetch", "note", "todo", "plan", "memory", "rag"} <= sent
    system = server.requests[0]["messages"][0]["content"]
    assert "context_fetch" in system and "`note`" in system and "`todo`" in system
    assert (tmp_path / ".ctxagent" / "snapshots" / agent.session.id / "1.json").is_file()


def test_automatic_compaction_reaches_every_sink_with_its_record(tmp_path, fake_openai) -> None:
    repo = big_repo(tmp_path)
    reads = [tool_calls([("terminal", json.dumps({"command": f"cat src/m{i}.py"}))]) for i in range(12)]
    server = fake_openai([*reads, text("Renamed everywhere.")])
    events: list = []
    with open_agent(repo, settings_for(server, context_window=12_000), sinks=[events.append]) as agent:
        end = agent.run_turn("Rename parse_cfg to parse_config across the repo.")
    assert end.reason == "finished" and end.answer == "Renamed everywhere."
    shown = [e for e in events if e.type == "compaction"]
    assert shown, "the renderer sees each automatic compaction (as many as the turn needs: issue 16)"
    for event in shown:
        details = event.details
        assert details["trigger"] == "auto" and details["tokens_after"] < details["tokens_before"]
        assert details["masked"] or details["dropped"]
    recorded = transcript_events(agent, "compaction")
    assert [r["details"] for r in recorded] == [json.loads(json.dumps(e.details)) for e in shown], \
        "and the transcript records each once"


def test_compaction_after_a_context_length_error_records_what_it_dropped(tmp_path, fake_openai) -> None:
    repo = big_repo(tmp_path, files=5)
    reads = [tool_calls([("terminal", json.dumps({"command": f"cat src/m{i}.py"}))]) for i in range(5)]
    server = fake_openai([*reads, TOO_LONG, text("fits now")], default_text="summary")
    events: list = []
    with open_agent(repo, settings_for(server), sinks=[events.append]) as agent:
        end = agent.run_turn("Read the five modules.")
    assert (end.reason, end.answer) == ("finished", "fits now")
    [shown] = [e for e in events if e.type == "compaction"]
    assert shown.method == shown.details["method"] == "masking" and shown.details["trigger"] == "overflow"
    assert len(shown.details["masked"]) == 2, "all but the 3 newest tool results (compaction_keep_tool_results)"
    results = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert results[0].startswith("[observation masked:") and "def parse_cfg_4" in results[-1], "the retry sent the masked view"
    [recorded] = transcript_events(agent, "compaction")
    assert recorded["details"] == json.loads(json.dumps(shown.details))


@pytest.mark.parametrize("focus", [None, "the release tag v9-TEST"])
def test_manual_compact_records_its_details(tmp_path, fake_openai, focus) -> None:
    repo = big_repo(tmp_path, files=3)
    reads = [tool_calls([("terminal", json.dumps({"command": f"cat src/m{i}.py"}))]) for i in range(3)]
    server = fake_openai([*reads, text("read them")], default_text="summary")
    with open_agent(repo, settings_for(server)) as agent:
        agent.run_turn("Read the three modules. The release tag is v9-TEST.")
        event = agent.compact("requested with /compact", manual=True, focus=focus)
    assert event.details["trigger"] == "manual" and event.details["focus"] == focus
    [recorded] = transcript_events(agent, "compaction")
    assert recorded["details"]["trigger"] == "manual"


def _snapshot(agent, call: int) -> dict:
    path = agent.session.repo / ".ctxagent" / "snapshots" / agent.session.id / f"{call}.json"
    return load_snapshot_file(path)


def _row(snapshot: dict, packet_id: str) -> dict:
    [row] = [p for p in snapshot["report"]["packets"] if p["id"] == packet_id]
    return row


def test_note_todo_and_memory_reach_the_next_model_call(tmp_path, fake_openai) -> None:
    note_id = NoteTool.for_repo(tmp_path).run({"action": "create", "title": "Release", "note_type": "conclusion",
                                               "content": "The release tag is v9-TEST; tag after the changelog."})
    TodoTool.for_repo(tmp_path).run({"action": "add", "content": "update the changelog", "status": "in_progress"})
    memory = MemoryTool.for_repo(tmp_path)
    memory.run({"action": "add", "content": "We deploy with uv, never pip.", "memory_type": "semantic",
                "importance": 0.8})
    memory.store.close()
    server = fake_openai([text("Tag v9-TEST, deploy with uv.")])
    with open_agent(tmp_path, settings_for(server)) as agent:
        agent.run_turn("How do we deploy the release?")
    snapshot = _snapshot(agent, 1)
    todos, note = _row(snapshot, "state:todos"), _row(snapshot, f"note:{note_id}")
    [hit] = [p for p in snapshot["report"]["packets"] if p["layer"] == "memory"]
    assert (todos["layer"], todos["decision"]) == ("state", "selected") and "update the changelog" in todos["preview"]
    assert (note["layer"], note["decision"]) == ("evidence", "selected") and note["relevance"] > 0
    assert (hit["decision"], hit["importance"]) == ("selected", 0.8) and "deploy with uv" in hit["preview"]
    messages = server.requests[0]["messages"]
    assert "v9-TEST" not in messages[0]["content"] and "update the changelog" not in messages[0]["content"]
    request = messages[-1]["content"]
    assert request.startswith("How do we deploy the release?\n\n[State]\nTodo board:\n- [~] update the changelog\n\n"
                              "[Evidence]\nNote (Release,"), "the request as typed, then the state (issue 16)"
    assert "We deploy with uv" in request


def test_memory_that_does_not_fit_is_dropped_and_says_why(tmp_path, fake_openai) -> None:
    memory = MemoryTool.for_repo(tmp_path)
    for i in range(5):  # distinct texts (near-duplicates would be dropped as such), ~2,000 tokens each
        words = " ".join(f"host{i}x{k}" for k in range(500))
        memory.run({"action": "add", "content": f"deploy note {i}: we deploy with uv to {words}", "importance": 0.9})
    memory.store.close()
    server = fake_openai([text("ok")])
    settings = settings_for(server, context_window=12_000, max_output_tokens=500)
    with open_agent(tmp_path, settings) as agent:
        end = agent.run_turn("How do we deploy?")
    assert end.answer == "ok" and len(server.requests) == 1
    report = _snapshot(agent, 1)["report"]
    hits = [p for p in report["packets"] if p["layer"] == "memory"]
    dropped = [p for p in hits if p["decision"] == "dropped"]
    assert len(hits) == 5 and dropped and all(p["reason"].startswith("over ") for p in dropped)
    sent = json.dumps(server.requests[0]["messages"])
    for row in dropped:
        assert row["preview"][:40] not in sent
    assert all(p["reason"].startswith("over memory layer budget: needs ") for p in dropped)
    assert 0 < report["layers"]["memory"]["used"] <= report["layers"]["memory"]["budget"]


def test_the_plan_tools_own_model_call_counts_in_the_turns_token_limit(tmp_path, fake_openai) -> None:
    """The plan tool asks the model through the session's client: its tokens are the
    turn's too, so max_task_tokens stops the turn before the next call, and the turn's
    end reports them."""
    plan = {"goal": "Split the parser", "steps": [{"title": f"Step {i}", "detail": f"do {i}", "validation": f"check {i}"}
                                                  for i in range(1, 6)],
            "risks": [{"risk": "imports break", "mitigation": "run the tests"}]}
    server = fake_openai([
        tool_calls([("plan", json.dumps({"goal": "Split the parser"}))], usage={"prompt_tokens": 500, "completion_tokens": 20}),
        text(json.dumps(plan), usage={"prompt_tokens": 4000, "completion_tokens": 300}),  # the plan tool's call
        text("never asked for"),
    ])
    base = settings_for(server)
    settings = base.replace(agent=base.agent.replace(max_task_tokens=3000))
    events: list = []
    with open_agent(tmp_path, settings, sinks=[events.append]) as agent:
        end = agent.run_turn("Plan the parser split.")
    assert end.reason == "max_tokens" and end.tokens == 500 + 20 + 4000 + 300
    assert len(server.requests) == 2, "the third call was never made"
    usage = [e for e in events if e.type == "usage"]
    assert [u.prompt_tokens for u in usage] == [500, 4000] and usage[-1].turn_prompt_tokens == 4500


def test_a_metered_client_counts_replies_and_not_failures(fake_openai) -> None:
    from ctxagent.llm.client import LLMClient
    from ctxagent.llm.errors import ServerError
    from ctxagent.llm.meter import MeteredClient, UsageMeter

    server = fake_openai([text("a", usage={"prompt_tokens": 7, "completion_tokens": 3}), error(500)])
    meter = UsageMeter()
    with LLMClient(settings_for(server).model) as client:
        metered = MeteredClient(client, meter)
        assert metered.chat([{"role": "user", "content": "hi"}]).content == "a"
        with pytest.raises(ServerError):
            metered.chat([{"role": "user", "content": "again"}])
        assert metered.settings is client.settings  # everything else is the wrapped client's
    taken = meter.take()
    assert (taken.prompt_tokens, taken.completion_tokens) == (7, 3)
    assert meter.take().total_tokens == 0
