"""The episodic memory each turn leaves (issue 3, "Wiring"): through `open_agent`, the
real loop and the real memory store, against the fake OpenAI server."""

from __future__ import annotations

import json
import threading

from ctxagent.agent.episodic import first_line, patch_paths
from ctxagent.agent.runtime import open_agent
from ctxagent.config.settings import AgentSettings, Settings
from ctxagent.llm.settings import ModelSettings
from ctxagent.tools.memory import MemoryTool
from ctxagent.validation import Secret
from tests.support.fake_openai import text, tool_calls

PATCH = ("*** Begin Patch\n*** Update File: app.py\n@@ def greet():\n-    return 'hello'\n+    return 'bonjour'\n"
         "*** Add File: docs/greeting.md\n+Greets in French.\n*** End Patch\n")
RENAME = "*** Begin Patch\n*** Update File: old.py\n*** Move to: new.py\n*** End Patch\n"
#: A look at the repository before answering: what makes an answer a finding worth an episode.
LOOK = tool_calls([("terminal", json.dumps({"command": "ls"}))])


def _settings(server, **agent: object) -> Settings:
    return Settings(model=ModelSettings(provider="custom", model="gpt-4o-mini", base_url=server.base_url,
                                        api_key=Secret("sk-test-0123456789"), max_retries=0, timeout_s=10),
                    agent=AgentSettings(auto_approve=True, **agent))


def _episode_rows(repo) -> list[dict]:
    memory = MemoryTool.for_repo(repo)
    try:
        return memory.run({"action": "search", "query": "", "memory_types": ["episodic"], "limit": 50,
                           "min_importance": 0.0})
    finally:
        memory.store.close()


def test_a_finished_turn_leaves_one_episode_with_task_outcome_files_and_tokens(tmp_path, fake_openai) -> None:
    (tmp_path / "app.py").write_text("def greet():\n    return 'hello'\n", encoding="utf-8")
    server = fake_openai([tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]),
                          text("Greeting is French now.\nDetails follow.")])
    with open_agent(tmp_path, _settings(server)) as agent:
        end = agent.run_turn("Make greet() answer in French\nand document it.")
    [episode] = _episode_rows(tmp_path)
    assert episode["memory_type"] == "episodic"
    lines = episode["content"].splitlines()
    assert lines[0] == "Task: Make greet() answer in French"
    assert lines[1] == "Outcome: finished: Greeting is French now."
    assert lines[2] == "Files changed: app.py, docs/greeting.md"
    assert lines[3] == f"Tokens: {end.tokens:,}" and end.tokens > 0
    meta = episode["metadata"]
    assert meta["files"] == ["app.py", "docs/greeting.md"] and meta["reason"] == "finished"
    assert meta["session_id"] == agent.session.id and meta["turn"] == 1


def test_the_episode_comes_back_as_evidence_in_a_later_session(tmp_path, fake_openai) -> None:
    server = fake_openai([LOOK, text("The tests use pytest-xdist.")])
    with open_agent(tmp_path, _settings(server)) as agent:
        agent.run_turn("Which test runner plugins does the suite use?")
    later = fake_openai([text("As before: pytest-xdist.")])
    with open_agent(tmp_path, _settings(later)) as agent:
        agent.run_turn("Remind me: which test runner plugins?")
    request = later.requests[0]["messages"][-1]["content"]
    assert request.startswith("Remind me: which test runner plugins?\n\n[Evidence]\nMemory (episodic): ")
    assert "The tests use pytest-xdist." in request


def test_this_sessions_episode_is_not_evidence_in_its_own_next_turn(tmp_path, fake_openai) -> None:
    server = fake_openai([LOOK, text("The tests use pytest-xdist."), LOOK, text("Still pytest-xdist.")])
    with open_agent(tmp_path, _settings(server)) as agent:
        agent.run_turn("Which test runner plugins does the suite use?")
        agent.run_turn("Remind me: which test runner plugins?")
    assert len(_episode_rows(tmp_path)) == 2  # both written, for later sessions
    messages = server.requests[2]["messages"]
    assert messages[-1]["content"] == "Remind me: which test runner plugins?"  # no [Evidence]: turn 1 is history
    assert {"role": "assistant", "content": "The tests use pytest-xdist."}.items() <= messages[-2].items()


def test_a_memory_the_agent_adds_comes_back_in_later_sessions_not_in_its_own(tmp_path, fake_openai) -> None:
    add = tool_calls([("memory", json.dumps({"action": "add", "content": "Releases are cut with make release-rc.",
                                             "memory_type": "semantic", "importance": 0.9}))])
    server = fake_openai([add, text("Noted."), text("With make release-rc.")])
    with open_agent(tmp_path, _settings(server, episodic_memory=False)) as agent:
        agent.run_turn("Remember: releases are cut with make release-rc.")
        agent.run_turn("How are releases cut?")
    assert server.requests[2]["messages"][-1]["content"] == "How are releases cut?"
    later = fake_openai([text("With make release-rc.")])
    with open_agent(tmp_path, _settings(later, episodic_memory=False)) as agent:
        agent.run_turn("How are releases cut?")
    sent = later.requests[0]["messages"][-1]["content"]
    assert sent == "How are releases cut?\n\n[Evidence]\nMemory (semantic): Releases are cut with make release-rc."


def test_a_resumed_session_gets_earlier_sessions_episodes_not_its_own(tmp_path, fake_openai) -> None:
    first = fake_openai([LOOK, text("The tests use pytest-xdist.")])
    with open_agent(tmp_path, _settings(first)) as agent:
        agent.run_turn("Which test runner plugins does the suite use?")
    second = fake_openai([LOOK, text("Coverage is measured with pytest-cov."), text("xdist and cov.")])
    with open_agent(tmp_path, _settings(second)) as agent:
        agent.run_turn("Which test runner plugin measures coverage?")
    with open_agent(tmp_path, _settings(second), resume=agent.session.id) as resumed:
        resumed.run_turn("Remind me: which test runner plugins?")
    messages = second.requests[-1]["messages"]
    task, evidence = messages[-1]["content"].split("\n\n[Evidence]\n")
    assert task == "Remind me: which test runner plugins?" and "The tests use pytest-xdist." in evidence
    assert "Coverage is measured" not in evidence  # its own episode: the rebuilt history holds that turn
    assert any(m.get("content") == "Coverage is measured with pytest-cov." for m in messages[:-1])


def test_a_stopped_turn_that_changed_nothing_leaves_no_episode(tmp_path, fake_openai) -> None:
    bad = tool_calls([("apply_patch", json.dumps({"patch": "*** Begin Patch\n*** Update File: nope.py\n@@\n-x\n+y\n"
                                                            "*** End Patch\n"}))])
    server = fake_openai([bad, bad, bad])
    with open_agent(tmp_path, _settings(server, max_steps=2)) as agent:
        end = agent.run_turn("Patch a file that does not exist")
    assert end.reason == "max_steps"
    assert _episode_rows(tmp_path) == []


def test_a_stopped_turn_that_changed_files_says_why(tmp_path, fake_openai) -> None:
    (tmp_path / "app.py").write_text("def greet():\n    return 'hello'\n", encoding="utf-8")
    server = fake_openai([tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]), LOOK, LOOK])
    with open_agent(tmp_path, _settings(server, max_steps=2)) as agent:
        assert agent.run_turn("Make greet() answer in French").reason == "max_steps"
    [episode] = _episode_rows(tmp_path)
    assert "Outcome: max_steps: stopped after 2 model calls" in episode["content"]
    assert episode["metadata"]["files"] == ["app.py", "docs/greeting.md"]


def test_the_api_key_never_reaches_the_episode(tmp_path, fake_openai) -> None:
    server = fake_openai([LOOK, text("noted")])
    with open_agent(tmp_path, _settings(server)) as agent:
        agent.run_turn("my key is sk-test-0123456789, and ghp_abcdefghijklmnopqrstuvwxyz is another")
    [episode] = _episode_rows(tmp_path)
    assert "sk-test-0123456789" not in episode["content"] and "ghp_abcdefghij" not in episode["content"]
    assert "[REDACTED]" in episode["content"]


def test_turns_without_a_model_call_leave_nothing(tmp_path, fake_openai) -> None:
    server = fake_openai([text("never sent")])
    cancel = threading.Event()
    cancel.set()
    with open_agent(tmp_path, _settings(server)) as agent:
        assert agent.run_turn("anything", cancel=cancel).reason == "interrupted"
    assert _episode_rows(tmp_path) == []


def test_episodic_memory_can_be_turned_off(tmp_path, fake_openai) -> None:
    server = fake_openai([text("done")])
    with open_agent(tmp_path, _settings(server, episodic_memory=False)) as agent:
        agent.run_turn("a task")
    assert _episode_rows(tmp_path) == []


def test_patch_paths_reads_renames_and_ignores_broken_arguments() -> None:
    assert patch_paths(json.dumps({"patch": RENAME})) == ["old.py", "new.py"]
    assert patch_paths(json.dumps({"patch": PATCH})) == ["app.py", "docs/greeting.md"]
    assert patch_paths('{"patch": "not a patch"}') == [] and patch_paths("{broken") == [] and patch_paths("") == []


def test_first_line_skips_blank_lines_and_cuts_long_ones() -> None:
    assert first_line("\n\n  hello  \nworld") == "hello"
    assert first_line(None) == "" and len(first_line("x" * 500)) == 200 and first_line("x" * 500).endswith("...")


# -- issue 15 item 4: only turns that did something, and never a stale one as fact ----------------

def test_a_bare_reply_and_a_bookkeeping_turn_leave_no_episode(tmp_path, fake_openai) -> None:
    todo = tool_calls([("todo", json.dumps({"action": "add", "content": "later"}))])
    server = fake_openai([text("What should I clear?"), todo, text("Added.")])
    with open_agent(tmp_path, _settings(server)) as agent:
        assert agent.run_turn("clear").reason == "finished"  # a mistyped command: the model just asks
        assert agent.run_turn("note that for later").reason == "finished"
    assert _episode_rows(tmp_path) == []


def test_an_interrupted_turn_leaves_no_episode_even_after_a_patch(tmp_path, fake_openai) -> None:
    (tmp_path / "app.py").write_text("def greet():\n    return 'hello'\n", encoding="utf-8")
    cancel = threading.Event()
    server = fake_openai([tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]), LOOK])

    def stop_after_patch(event) -> None:
        if getattr(event, "type", "") == "tool_result":
            cancel.set()  # the user presses Ctrl-C once the patch is applied

    with open_agent(tmp_path, _settings(server), sinks=[stop_after_patch]) as agent:
        assert agent.run_turn("Make greet() answer in French", cancel=cancel).reason == "interrupted"
    assert "bonjour" in (tmp_path / "app.py").read_text(encoding="utf-8")
    assert _episode_rows(tmp_path) == []


def test_a_reverted_change_makes_its_episode_stale_and_keeps_it_out_of_later_requests(tmp_path, fake_openai) -> None:
    original = "def greet():\n    return 'hello'\n"
    (tmp_path / "app.py").write_text(original, encoding="utf-8")
    server = fake_openai([tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]), text("Greeting is French now.")])
    with open_agent(tmp_path, _settings(server)) as agent:
        agent.run_turn("Make greet() answer in French")
    [episode] = _episode_rows(tmp_path)
    state = episode["metadata"]["file_state"]
    assert state["app.py"]["before"] and state["app.py"]["after"] and state["app.py"]["before"] != state["app.py"]["after"]
    assert state["docs/greeting.md"]["before"] is None and state["docs/greeting.md"]["after"]
    assert "stale" not in episode

    (tmp_path / "app.py").write_text(original, encoding="utf-8")  # the user reverts the change
    [episode] = _episode_rows(tmp_path)
    assert episode["stale"] == "reverted: app.py"
    later = fake_openai([text("Hello.")])
    with open_agent(tmp_path, _settings(later)) as agent:
        agent.run_turn("Make greet() answer in French again")
    assert "Greeting is French now" not in json.dumps(later.requests[0]["messages"])
