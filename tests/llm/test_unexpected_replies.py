"""Replies that are not the stream asked for (issue 15, items 6-8): malformed SSE, a plain JSON
completion, an HTML page with status 200, an empty reply. Against the fake server over real HTTP."""

from __future__ import annotations

import json

import pytest

from ctxagent.llm.errors import ContextLengthError, EmptyReplyError, ServerError, UnexpectedReplyError
from tests.llm.conftest import TEST_KEY, USER
from tests.support.fake_openai import raw, text, tool_calls

COMPLETION = {"id": "c1", "object": "chat.completion", "created": 1, "model": "fake-model",
              "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                  "role": "assistant", "content": None, "reasoning_content": "look first",
                  "tool_calls": [{"id": "call_a", "type": "function",
                                  "function": {"name": "terminal", "arguments": "{\"command\": \"ls\"}"}}]}}],
              "usage": {"prompt_tokens": 12, "completion_tokens": 3}}


@pytest.mark.parametrize("body, shown", [
    ('data: {"id": "x", "choices": [{"index": 0, "delta": {"content": "hi"}\n\n', '{"id": "x", "choices"'),
    ("data: 42\n\n", "42"),
    ('data: {"choices": [{"index": 0, "delta": "text"}]}\n\n', '"delta": "text"'),
    ('data: {"choices": "nope"}\n\n', '"choices": "nope"'),
])
def test_06_malformed_stream_data_is_a_model_error_quoting_it(fake_openai, make_client, body, shown):
    server = fake_openai([raw(body)])
    with pytest.raises(UnexpectedReplyError) as info:
        make_client(server, sleep=lambda s: None).chat(USER)
    assert shown in str(info.value) and "base_url" in str(info.value)
    assert len(server.requests) == 1  # the same server would answer the same: not retried


def test_06_a_quoted_reply_is_cut_and_never_shows_the_key(fake_openai, make_client):
    body = "data: {" + f'"echo": "{TEST_KEY}", ' + "x" * 2000 + "\n\n"
    with pytest.raises(UnexpectedReplyError) as info:
        make_client(fake_openai([raw(body)])).chat(USER)
    message = str(info.value)
    assert TEST_KEY not in message and len(message) < 800


def test_07_a_plain_json_completion_is_the_reply(fake_openai, make_client):
    server = fake_openai([raw(json.dumps(COMPLETION), content_type="application/json")])
    deltas = []
    reply = make_client(server).chat(USER, on_delta=deltas.append)
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("call_a", "terminal", '{"command": "ls"}')]
    assert reply.reasoning_content == "look first" and reply.finish_reason == "tool_calls"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (12, 3)
    assert any(d.kind == "reasoning" for d in deltas)


def test_07_a_server_ignoring_stream_true_gives_its_text(fake_openai, make_client):
    server = fake_openai([text("the plain answer", ignore_stream=True)])
    reply = make_client(server).chat(USER)
    assert reply.content == "the plain answer" and reply.finish_reason == "stop"
    assert server.requests[0]["stream"] is True


def test_07_sse_under_another_content_type_is_read(fake_openai, make_client):
    chunk = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
    body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n"
    assert make_client(fake_openai([raw(body, content_type="text/plain")])).chat(USER).content == "ok"


def test_07_an_html_page_says_text_html_and_base_url(fake_openai, make_client):
    page = "<!DOCTYPE html><html><head><title>Sign in - Corp Proxy</title></head><body>...</body></html>"
    server = fake_openai([raw(page, content_type="text/html; charset=utf-8")])
    with pytest.raises(UnexpectedReplyError) as info:
        make_client(server).chat(USER)
    message = str(info.value)
    assert "text/html" in message and "Sign in - Corp Proxy" in message and server.base_url in message


def test_07_an_error_object_with_status_200_is_a_server_error(fake_openai, make_client):
    body = json.dumps({"error": {"message": "upstream overloaded"}})
    with pytest.raises(ServerError, match="upstream overloaded"):
        make_client(fake_openai([raw(body, content_type="application/json")])).chat(USER)
    body = json.dumps({"error": {"message": "maximum context length is 8192 tokens"}})
    with pytest.raises(ContextLengthError):
        make_client(fake_openai([raw(body, content_type="application/json")])).chat(USER)


def test_07_json_that_is_no_completion_is_quoted(fake_openai, make_client):
    with pytest.raises(UnexpectedReplyError, match="not a chat completion.*hello"):
        make_client(fake_openai([raw('{"hello": "world"}', content_type="application/json")])).chat(USER)


@pytest.mark.parametrize("step, says", [
    (text(""), "empty reply"),
    (text("   \n"), "empty reply"),
    (text("", reasoning="thinking only"), "it only reasoned"),
    (text("", finish_reason="length"), "max_output_tokens"),
    (text("", finish_reason="content_filter"), "content filter"),
])
def test_08_an_empty_reply_is_a_model_error(fake_openai, make_client, step, says):
    server = fake_openai([step])
    with pytest.raises(EmptyReplyError, match=says):
        make_client(server).chat(USER)
    assert len(server.requests) == 1


def test_08_a_reply_with_only_tool_calls_is_not_empty(fake_openai, make_client):
    assert make_client(fake_openai([tool_calls([("ls", "{}")])])).chat(USER).tool_calls
