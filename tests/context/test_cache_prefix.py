"""Requests that change only at their end (issue 16), through the real loop and the fake server:
a state block stays where it was sent and a new one follows the newest message only when the
state changed; a summary request is the conversation's own request plus one question."""

from __future__ import annotations

import json

from ctxagent.agent.runtime import open_agent
from ctxagent.config.settings import AgentSettings, Settings
from ctxagent.llm.settings import ModelSettings
from ctxagent.validation import Secret
from tests.support.fake_openai import text, tool_calls
from tests.support.found_facts import run_session


def _settings(server) -> Settings:
    return Settings(model=ModelSettings(provider="custom", model="gpt-4o-mini", base_url=server.base_url,
                                        api_key=Secret("sk-test-0123456789abcdef"), max_retries=0, timeout_s=10,
                                        context_window=64_000, max_output_tokens=1000),
                    agent=AgentSettings(tools=["terminal", "todo"], episodic_memory=False, auto_approve=True))


def _blocks(request: dict) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "user" and "[State]" in str(m["content"])]


def test_a_changed_board_adds_a_block_after_the_newest_message_and_keeps_the_old_one(tmp_path, fake_openai) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    add = lambda title: tool_calls([("todo", json.dumps({"action": "add", "content": title}))])  # noqa: E731
    cat = tool_calls([("terminal", json.dumps({"command": "cat a.py"}))])
    server = fake_openai([add("read a.py"), cat, add("report x"), cat, text("x is 1.")])
    with open_agent(tmp_path, _settings(server)) as agent:
        agent.run_turn("What is x in a.py?")
    sent = server.requests
    assert len(sent) == 5
    for before, after in zip(sent, sent[1:]):  # each request is the whole previous one, then new messages
        assert after["messages"][:len(before["messages"])] == before["messages"]
    assert [len(_blocks(r)) for r in sent] == [0, 1, 1, 2, 2], "a block only when the board changed"
    old, new = _blocks(sent[-1])
    assert "read a.py" in old and "report x" not in old and "report x" in new and "read a.py" in new
    assert sent[3]["messages"][-1]["content"] == new, "the new block follows the newest message"


def test_the_summary_request_is_the_previous_request_plus_one_question(tmp_path) -> None:
    result = run_session(tmp_path, files=8, calls=18, window=12_000)  # room for the question beside the request
    every = result["every_request"]
    asks = [n for n, r in enumerate(every) if "You are compacting" in str(r["messages"][-1]["content"])]
    assert asks and result["missing"] == []
    for n in asks:
        ask, before = every[n], every[n - 1]
        *prefix, question = ask["messages"]
        assert question["role"] == "user" and "## Key facts" in question["content"]
        assert prefix[:len(before["messages"])] == before["messages"], "the cached prefix, byte for byte"
        assert ask["tools"] == before["tools"] and ask["tool_choice"] == "none"
