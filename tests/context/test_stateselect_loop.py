"""The agent's real requests: the todo board reaches the model as state, notes and memory
as evidence selected for the request, and `ctxagent inspect --grep` says why a note was
or was not seen. Real loop + real client against the fake OpenAI server; nothing of ours
is mocked."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ctxagent.agent.runtime import open_agent
from ctxagent.cli.main import cli, register_commands
from ctxagent.config.settings import Settings
from ctxagent.context.record.snapshot import load_snapshot_file
from ctxagent.llm.settings import ModelSettings
from ctxagent.tools.memory import MemoryTool
from ctxagent.tools.notes import NoteTool
from ctxagent.tools.todo import TodoTool
from ctxagent.validation import Secret
from tests.support.fake_openai import text, tool_calls

KEY = "sk-test-SECRET-abcdef0123456789"
ASIDES = ("gardening tomatoes and basil", "chess openings for the sicilian defence", "sourdough starter hydration",
          "herons seen at the estuary", "watercolour paper weights", "a marathon tapering schedule")
RELEVANT = {"Config loader": "parse_cfg reads config.toml and falls back to defaults.",
            "Callers": "parse_cfg has 40 callers, most of them in src/cli.",
            "Rename rule": "Keep a deprecated parse_cfg alias that warns, for one release."}
TASK = "Rename parse_cfg to parse_config across the repo."


def settings_for(server, **model: object) -> Settings:
    opts = {"context_window": 128_000, "max_output_tokens": 1000, **model}
    return Settings(model=ModelSettings(provider="custom", model="gpt-4o-mini", base_url=server.base_url,
                                        api_key=Secret(KEY), max_retries=0, timeout_s=10, **opts))


def workspace(repo: Path, asides: int = 27) -> dict[str, str]:
    """`asides` off-topic notes and the 3 RELEVANT ones (title -> id), a todo board and a memory."""
    notes = NoteTool.for_repo(repo)
    ids = {}
    for i in range(asides):
        ids[f"Aside {i}"] = notes.run({"action": "create", "title": f"Aside {i}",
                                       "content": f"Weekend musing {i}: {ASIDES[i % len(ASIDES)]}."})
    for title, body in RELEVANT.items():
        ids[title] = notes.run({"action": "create", "title": title, "content": body, "note_type": "conclusion"})
    todo = TodoTool.for_repo(repo)
    todo.run({"action": "add", "content": "rename parse_cfg in src/", "status": "in_progress"})
    todo.run({"action": "add", "content": "update CHANGELOG.md", "status": "pending"})
    memory = MemoryTool.for_repo(repo)
    memory.run({"action": "add", "content": "The user wants deprecated aliases for renamed config functions "
                "like parse_cfg.", "memory_type": "semantic", "importance": 0.8})
    memory.store.close()
    return ids


def snapshot(agent, call: int) -> dict:
    path = agent.session.repo / ".ctxagent" / "snapshots" / agent.session.id / f"{call}.json"
    return load_snapshot_file(path)


def packets(snap: dict) -> dict[str, dict]:
    return {p["id"]: p for p in snap["report"]["packets"]}


def state_block(request: dict) -> str:
    """The last state block of a request (issue 16: sent after the newest message when the state
    changed, else where it was first sent), which the model reads as the current state."""
    blocks = [m["content"] for m in request["messages"] if m["role"] == "user" and "[State]" in str(m["content"])]
    assert blocks, "no [State] block in the request"
    return blocks[-1][blocks[-1].index("[State]"):]


def test_of_30_notes_the_3_relevant_are_evidence_and_the_board_is_state(tmp_path, fake_openai) -> None:
    ids = workspace(tmp_path)
    server = fake_openai([text("Renamed.")])
    with open_agent(tmp_path, settings_for(server)) as agent:
        agent.run_turn(TASK)
    messages = server.requests[0]["messages"]
    request = messages[-1]["content"]
    assert request.startswith(f"{TASK}\n\n[State]\nTodo board:\n- [~] rename parse_cfg in src/\n- [ ] update CHANGELOG.md\n\n")
    evidence = request.split("[Evidence]\n", 1)[1]
    for title, body in RELEVANT.items():
        assert f"Note ({title}, conclusion, id {ids[title]}): {body}" in evidence
    assert "Weekend musing" not in json.dumps(messages), "no off-topic note reaches the model"
    assert "Memory (semantic): The user wants deprecated aliases" in evidence
    assert "parse_cfg has 40 callers" not in messages[0]["content"], "nothing of it in the system message"

    rows = packets(snapshot(agent, 1))
    for title in RELEVANT:
        row = rows[f"note:{ids[title]}"]
        assert (row["layer"], row["decision"], row["title"]) == ("evidence", "selected", title)
        assert row["relevance"] > 0 and row["score"] > 0 and row["reason"] == "fits its layer budget"
    aside = rows[f"note:{ids['Aside 2']}"]
    assert (aside["decision"], aside["relevance"]) == ("dropped", 0.0)
    assert aside["reason"] == "relevance 0.00 below min_relevance 0.1"
    [memory] = [r for r in rows.values() if r["layer"] == "memory"]
    assert memory["decision"] == "selected" and memory["importance"] == 0.8 and 0 < memory["score"] <= memory["relevance"]
    assert (rows["state:todos"]["layer"], rows["state:todos"]["decision"]) == ("state", "selected")
    layers = snapshot(agent, 1)["report"]["layers"]
    for layer in ("evidence", "memory"):
        assert 0 < layers[layer]["used"] <= layers[layer]["budget"]


def test_inspect_grep_says_why_a_note_was_or_was_not_seen(tmp_path, fake_openai) -> None:
    ids = workspace(tmp_path, asides=6)
    server = fake_openai([text("Renamed.")])
    with open_agent(tmp_path, settings_for(server)) as agent:
        agent.run_turn(TASK)
    runner = CliRunner()
    result = runner.invoke(register_commands(cli), ["inspect", "last", "--repo", str(tmp_path), "--grep", "sourdough",
                                                    "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["grep"] == {"text": "sourdough", "in_request": False, "in_side_calls": [], "in_summary_calls": []}
    [row] = data["report"]["packets"]
    assert row["id"] == f"note:{ids['Aside 2']}" and row["decision"] == "dropped"
    assert row["reason"] == "relevance 0.00 below min_relevance 0.1"
    seen = json.loads(runner.invoke(register_commands(cli), ["inspect", "last", "--repo", str(tmp_path),
                                                             "--grep", "Rename rule", "--json"]).output)
    assert seen["grep"]["in_request"] is True
    assert [(r["id"], r["decision"]) for r in seen["report"]["packets"]] == [(f"note:{ids['Rename rule']}", "selected")]
    table = runner.invoke(register_commands(cli), ["inspect", "last", "--repo", str(tmp_path), "--grep", "sourdough"])
    assert table.exit_code == 0 and "sourdough does not appear in the request" in table.output
    assert f"note:{ids['Aside 2']} (Aside 2): dropped: relevance 0.00 below min_relevance 0.1" in table.output


def big_repo(root: Path, files: int = 12) -> None:
    (root / "src").mkdir()
    for i in range(files):
        line = f"def helper_{i}(value):  # helper {i} of the loader\n"
        (root / "src" / f"m{i}.py").write_text((line * 80)[:3000], encoding="utf-8")


def test_after_compaction_the_board_and_the_relevant_notes_are_still_there(tmp_path, fake_openai) -> None:
    ids = workspace(tmp_path, asides=10)
    big_repo(tmp_path)
    reads = [tool_calls([("terminal", json.dumps({"command": f"cat src/m{i}.py"}))]) for i in range(12)]
    server = fake_openai([*reads, text("Renamed everywhere.")])
    events: list = []
    with open_agent(tmp_path, settings_for(server, context_window=12_000), sinks=[events.append]) as agent:
        end = agent.run_turn(TASK)
        assert end.reason == "finished"
        snaps = [snapshot(agent, n) for n in range(1, agent.assembler.calls + 1)]
    assert {e.details["trigger"] for e in events if e.type == "compaction"} == {"auto"}
    compacted = [s for s in snaps if s["report"]["compaction"]]
    assert compacted
    for snap in (*compacted, snaps[-1]):
        request = state_block(snap["request"])
        assert "- [~] rename parse_cfg in src/" in request.split("[Evidence]")[0]
        for title, body in RELEVANT.items():
            assert body in request and packets(snap)[f"note:{ids[title]}"]["decision"] == "selected"
        assert packets(snap)["state:todos"]["decision"] == "selected"
        assert snap["report"]["budget"]["used_tokens"] <= snap["report"]["budget"]["input_budget"]
    assert json.dumps(server.requests[-1]["messages"]).count("parse_cfg has 40 callers") == 1


def test_requests_within_a_turn_share_their_prefix(tmp_path, fake_openai) -> None:
    """Prompt caching: while the state does not change, each call's request is the whole previous
    one, byte for byte as sent, with new messages at its end: the state block stays where it was
    first sent (issue 16)."""
    workspace(tmp_path, asides=4)
    big_repo(tmp_path, files=3)
    reads = [tool_calls([("terminal", json.dumps({"command": f"cat src/m{i}.py"}))]) for i in range(3)]
    server = fake_openai([*reads, text("done")])
    with open_agent(tmp_path, settings_for(server)) as agent:
        agent.run_turn(TASK)
    sent = [r["messages"] for r in server.requests]
    assert len(sent) == 4
    for before, after in zip(sent, sent[1:]):
        assert len(after) > len(before) and after[:len(before)] == before
        assert json.dumps(after).startswith(json.dumps(before)[:-1])
    blocks = [[m for m in request if m["role"] == "user" and "[State]" in str(m["content"])] for request in sent]
    assert [len(b) for b in blocks] == [1, 1, 1, 1]
    assert "[State]" in sent[0][-1]["content"]


def test_a_note_the_model_writes_is_evidence_in_its_next_call(tmp_path, fake_openai) -> None:
    create = {"action": "create", "title": "Port", "note_type": "conclusion",
              "content": "The service listens on port 8443, set in deploy/service.toml."}
    server = fake_openai([tool_calls([("note", json.dumps(create))]), text("Port 8443.")])
    with open_agent(tmp_path, settings_for(server)) as agent:
        agent.run_turn("Which port does the service listen on?")
    first, second = (r["messages"] for r in server.requests)
    assert first[-1]["content"] == "Which port does the service listen on?", "no state yet: the request as typed"
    question, user = [m for m in second if m["role"] == "user"]
    assert question == first[-1] and user == second[-1], "the question as typed, the state last"
    assert user["content"].startswith("[Evidence]\nNote (Port, conclusion, id ")
    assert "port 8443, set in deploy/service.toml" in user["content"]
    assert second[0] == first[0], "the system message did not change"
