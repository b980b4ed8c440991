"""`open_agent` wires the real parts: model client, session, the full tool set, the
context engine's assembler (with model summaries) and compaction events that reach every
sink. Real loop + real client against the fake OpenAI server; nothing of ours is mocked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from ctxagent.agent.runtime import open_agent
from ctxagent.config import Settings
from ctxagent.context.assembler import ContextAssembler
from ctxagent.llm.settings import ModelSettings
from ctxagent.storage import read_jsonl
from tests.support.fake_openai import error, text, tool_calls

KEY = "sk-test-SECRET-abcdef0123456789"
TOO_LONG = error(400, {"error": {"message": "This model's maximum context length is 8192 tokens. However, your "
                                            "messages resulted in 9000 tokens.", "type": "invalid_request_error",
                                 "code": "context_length_exceeded"}})


def settings_for(server, **model: object) -> Settings:
    opts = {"context_window": 128_000, "max_output_tokens": 1000, **model}
    return Settings(model=ModelSettings(provider="custom", model="gpt-4o-mini", base_url=server.base_url,
                                        api_key=SecretStr(KEY), max_retries=0, timeout_s=10, **opts))


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
    assert len(shown) == 1, "the renderer sees the automatic compaction, once per turn"
    details = shown[0].details
    assert details["trigger"] == "auto" and details["tokens_after"] < details["tokens_before"]
    assert details["masked"] or details["dropped"]
    recorded = transcript_events(agent, "compaction")
    assert [r["details"]["trigger"] for r in recorded] == ["auto"], "and the transcript records it once"


def test_compaction_after_a_context_length_error_records_what_it_dropped(tmp_path, fake_openai) -> None:
    repo = big_repo(tmp_path, files=5)
    reads = [tool_calls([("terminal", json.dumps({"command": f"cat src/m{i}.py"}))]) for i in range(5)]
    server = fake_openai([*reads, TOO_LONG, text("fits now")], default_text="summary")
    events: list = []
    with open_agent(repo, settings_for(server), sinks=[events.append]) as agent:
        end = agent.run_turn("Read the five modules.")
    assert (end.reason, end.answer) == ("finished", "fits now")
    [shown] = [e for e in events if e.type == "compaction"]
    assert shown.method == "assembler" and shown.details["trigger"] == "overflow"
    assert len(shown.details["masked"]) == 2, "all but the 3 newest tool results (compaction_keep_tool_results)"
    results = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert "def parse_cfg_0" not in results[0] and "def parse_cfg_4" in results[-1], "the retry sent the masked view"
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
