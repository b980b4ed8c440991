"""Anthropic-style cache_control marks at the end of the stable prefix (issue 16), as sent."""

from __future__ import annotations

import copy

from ctxagent.llm.cache_marks import mark_stable_prefix
from tests.support.fake_openai import text

MARK = {"type": "ephemeral"}
SYSTEM = {"role": "system", "content": "rules"}
CALL = {"role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}


def marked(messages):
    return [i for i, m in enumerate(messages) if isinstance(m.get("content"), list)
            and m["content"][-1].get("cache_control") == MARK]


def test_first_call_marks_only_the_system_message():
    out = mark_stable_prefix([SYSTEM, {"role": "user", "content": "task"}])
    assert marked(out) == [0] and out[0]["content"] == [{"type": "text", "text": "rules", "cache_control": MARK}]
    assert out[1] == {"role": "user", "content": "task"}


def test_the_last_history_message_before_the_trailing_user_messages_is_marked():
    messages = [SYSTEM, {"role": "user", "content": "task"}, CALL, RESULT, {"role": "user", "content": "[State] ..."}]
    before = copy.deepcopy(messages)
    out = mark_stable_prefix(messages)
    assert marked(out) == [0, 3] and out[3]["tool_call_id"] == "c1"
    assert messages == before  # the caller's list and dicts are untouched


def test_an_assistant_message_with_only_tool_calls_is_left_alone_and_parts_keep_their_order():
    out = mark_stable_prefix([SYSTEM, {"role": "user", "content": "t"}, CALL])
    assert marked(out) == [0] and out[2] is CALL
    parts = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    out = mark_stable_prefix([{"role": "system", "content": parts}])
    assert [p["text"] for p in out[0]["content"]] == ["a", "b"] and "cache_control" not in parts[1]


def test_the_client_sends_marks_only_with_the_setting(fake_openai, make_client):
    server = fake_openai([text("one"), text("two")])
    messages = [SYSTEM, {"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"},
                {"role": "user", "content": "again"}]
    make_client(server).chat(messages)
    make_client(server, cache_control=True).chat(messages)
    plain, with_marks = server.requests
    assert all(isinstance(m["content"], str) for m in plain["messages"])
    assert marked(with_marks["messages"]) == [0, 2]
