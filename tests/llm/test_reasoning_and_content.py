"""Cases C06 (reasoning kept apart, sent back only when set) and C07 (null vs "" content)."""

from __future__ import annotations

import json

import pytest

from ctxagent.llm.messages import ChatResponse, ToolCall, prepare_messages
from ctxagent.llm.settings import ModelSettings
from tests.llm.conftest import USER
from tests.support.fake_openai import text, tool_calls

CALL = {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}


def _history(content, reasoning="I should list the files."):
    return [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "List the repo."},
        {"role": "assistant", "content": content, "tool_calls": [CALL], "reasoning_content": reasoning},
        {"role": "tool", "tool_call_id": "call_1", "content": "a.py"},
    ]


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_C06_streamed_reasoning_is_collected_apart_from_content(fake_openai, make_client, field):
    server = fake_openai([text("The answer is 42.", reasoning="Let me think: 6*7 = 42.",
                               reasoning_field=field, chunk_size=3)])
    deltas = []
    reply = make_client(server).chat(USER, on_delta=deltas.append)
    assert reply.content == "The answer is 42."
    assert reply.reasoning_content == "Let me think: 6*7 = 42."
    assert "think" not in "".join(d.text for d in deltas if d.kind == "text")
    assert "".join(d.text for d in deltas if d.kind == "reasoning") == reply.reasoning_content


def test_C06_reasoning_beside_tool_calls_is_kept_on_the_assistant_message(fake_openai, make_client):
    server = fake_openai([tool_calls([("ls", "{}")], reasoning="List first.")])
    client = make_client(server, send_reasoning_content=True)
    reply = client.chat(USER)
    msg = reply.assistant_message(client.settings)
    assert msg["reasoning_content"] == "List first." and msg["content"] is None
    assert "List first." not in str(msg["tool_calls"])


@pytest.mark.parametrize("send", [True, False])
def test_C06_reasoning_is_sent_back_only_when_the_setting_says(fake_openai, make_client, send):
    server = fake_openai([text("ok")])
    make_client(server, send_reasoning_content=send).chat(_history(None))
    sent = server.requests[0]["messages"][2]
    assert ("reasoning_content" in sent) is send
    if send:
        assert sent["reasoning_content"] == "I should list the files."
    assert sent["tool_calls"] == [CALL]


def test_C06_earlier_turns_keep_reasoning_too_when_sending(fake_openai, make_client):
    history = _history(None) + [{"role": "assistant", "content": "Done.", "reasoning_content": "r2"},
                                {"role": "user", "content": "next"}]
    server = fake_openai([text("ok")])
    make_client(server, send_reasoning_content=True).chat(history)
    sent = server.requests[0]["messages"]
    assert sent[2]["reasoning_content"] == "I should list the files." and sent[4]["reasoning_content"] == "r2"


@pytest.mark.parametrize("server_form", [None, ""])
def test_C07_null_and_empty_content_beside_tool_calls_are_accepted(fake_openai, make_client, server_form):
    step = tool_calls([("ls", "{}")], empty_content=server_form)
    reply = make_client(fake_openai([step])).chat(USER)
    assert [c.name for c in reply.tool_calls] == ["ls"]
    assert reply.content in (None, "")


@pytest.mark.parametrize("setting,expected", [("null", None), ("empty", "")])
@pytest.mark.parametrize("history_form", [None, ""])
def test_C07_outgoing_empty_content_follows_the_setting(fake_openai, make_client, setting,
                                                         expected, history_form):
    server = fake_openai([text("ok")])
    make_client(server, empty_content=setting).chat(_history(history_form))
    sent = server.requests[0]["messages"]
    assert len(sent) == 4  # nothing dropped
    assert "content" in sent[2] and sent[2]["content"] == expected and sent[2]["tool_calls"] == [CALL]


@pytest.mark.parametrize("setting,expected", [("null", None), ("empty", "")])
def test_C07_assistant_message_follows_the_setting(setting, expected):
    reply = ChatResponse(content=None, tool_calls=[ToolCall("c", "ls", "{}")], finish_reason="tool_calls")
    msg = reply.assistant_message(ModelSettings(model="m", empty_content=setting))
    assert msg["content"] == expected and msg["tool_calls"][0]["function"]["name"] == "ls"
    assert "reasoning_content" not in msg


def test_prepare_messages_never_mutates_or_drops():
    settings = ModelSettings(model="m")
    history = _history("", reasoning="secret thoughts") + [
        {"role": "assistant", "content": None},
        {"role": "assistant", "content": None, "tool_calls": []},
    ]
    before = [dict(m) for m in history]
    sent = prepare_messages(history, settings)
    assert history == before
    assert len(sent) == len(history)
    assert all("reasoning_content" not in m for m in sent)
    assert sent[4] == {"role": "assistant", "content": ""}
    assert sent[5] == {"role": "assistant", "content": ""}  # empty tool_calls list removed
    assert sent[3] is history[3]  # tool messages pass through untouched


def test_lone_surrogates_are_sent_as_replacement_characters() -> None:
    """A request body must be UTF-8: text read with surrogateescape (bytes that were not
    UTF-8) is sent with U+FFFD in their place; messages without any are passed as they are."""
    clean = {"role": "user", "content": "plain text"}
    dirty = [clean, {"role": "user", "content": [{"type": "text", "text": "caf\udce9"}]},
             {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "cat caf\udce9"}'}}]},
             {"role": "tool", "tool_call_id": "c1", "content": "x\ud800y"}]
    sent = prepare_messages(dirty, ModelSettings(model="gpt-4o"))
    assert sent[0] is clean
    assert sent[1]["content"][0]["text"] == "caf\ufffd"
    assert sent[2]["tool_calls"][0]["function"]["arguments"] == '{"command": "cat caf\ufffd"}'
    assert sent[3]["content"] == "x\ufffdy"
    assert dirty[3]["content"] == "x\ud800y"  # inputs never mutated
    json.dumps(sent, ensure_ascii=False).encode("utf-8")  # encodable now
