"""Case L03: streamed tool calls assembled by index; cut-off streams raise, never half calls."""

from __future__ import annotations

import json

import pytest

from ctxagent.llm.errors import ContextLengthError, StreamInterruptedError
from ctxagent.llm.stream import StreamAssembler
from tests.llm.conftest import USER
from tests.support.fake_openai import drop_stream_after, stream_error_after, text, tool_calls

READ = ("read_file", json.dumps({"path": "src/main.py", "start": 1, "end": 40}))
GREP = ("grep", json.dumps({"pattern": "parse_cfg", "glob": "**/*.py"}))


def test_L03_interleaved_parallel_calls_come_out_complete_in_index_order(fake_openai, make_client):
    server = fake_openai([tool_calls([READ, GREP], interleave=True, chunk_size=3)])
    deltas = []
    reply = make_client(server).chat(USER, on_delta=deltas.append)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [READ, GREP]
    assert [json.loads(c.arguments) for c in reply.tool_calls]  # complete, valid JSON
    assert reply.tool_calls[0].id != reply.tool_calls[1].id
    assert reply.finish_reason == "tool_calls" and reply.content is None
    fragment_indexes = [d.index for d in deltas if d.kind == "tool_call" and d.text]
    assert fragment_indexes[:4] == [0, 1, 0, 1]  # the fragments really alternated


def test_L03_sequential_parallel_calls_also_assemble(fake_openai, make_client):
    server = fake_openai([tool_calls([READ, GREP, ("ls", "{}")], interleave=False)])
    reply = make_client(server).chat(USER)
    assert [c.name for c in reply.tool_calls] == ["read_file", "grep", "ls"]


@pytest.mark.parametrize("after", [1, 2, 5, 9])
def test_L03_dropped_connection_raises_StreamInterruptedError(fake_openai, make_client, after):
    server = fake_openai([drop_stream_after(after, calls=[dict(name=READ[0], arguments=READ[1])])])
    client = make_client(server, sleep=lambda s: None)
    with pytest.raises(StreamInterruptedError) as info:
        client.chat(USER)
    assert len(server.requests) == 1  # not retried: deltas were already shown
    assert not info.value.retryable
    assert client.chat(USER).content == "done"  # the client (and session) survives


def test_L03_clean_end_without_finish_reason_is_interrupted(fake_openai, make_client):
    server = fake_openai([drop_stream_after(3, clean=True, content="half an ans")])
    with pytest.raises(StreamInterruptedError, match="without a finish_reason"):
        make_client(server).chat(USER)


def test_L03_drop_before_the_first_chunk_is_retried_since_nothing_was_shown(fake_openai, make_client):
    server = fake_openai([drop_stream_after(0)])
    deltas = []
    reply = make_client(server, sleep=lambda s: None).chat(USER, on_delta=deltas.append)
    assert reply.content == "done" and len(server.requests) == 2
    assert "".join(d.text for d in deltas) == "done"


def test_length_finish_returns_raw_cut_arguments(fake_openai, make_client):
    step = {"type": "length", "calls": [{"name": "read_file", "arguments": '{"path": "src/ma'}]}
    reply = make_client(fake_openai([step])).chat(USER)
    assert reply.finish_reason == "length"
    assert reply.tool_calls[0].arguments == '{"path": "src/ma'


def test_non_json_arguments_are_passed_through_raw(fake_openai, make_client):
    raw = ['{"a":1}{"b":2}', "[1, 2]", "", '{"pattern": "a\\\\d+"}']
    server = fake_openai([tool_calls([("t", r) for r in raw])])
    reply = make_client(server).chat(USER)
    assert [c.arguments for c in reply.tool_calls] == raw


def test_text_streams_as_deltas_and_content_is_joined(fake_openai, make_client):
    server = fake_openai([text("The quick brown fox jumps", chunk_size=2)])
    deltas = []
    reply = make_client(server).chat(USER, on_delta=deltas.append)
    assert "".join(d.text for d in deltas if d.kind == "text") == reply.content
    assert len([d for d in deltas if d.kind == "text"]) > 5


# ---- the assembler on chunk dicts: servers that stream tool calls differently

def _chunk(delta=None, finish=None, usage=None):
    chunk = {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}
    if usage is not None:
        chunk["usage"] = usage
    return chunk


def _assemble(deltas, finish="tool_calls"):
    asm = StreamAssembler()
    for d in deltas:
        asm.feed(_chunk(d))
    asm.feed(_chunk(finish=finish))
    return asm.result()


def test_id_and_name_only_in_first_fragment():
    reply = _assemble([
        {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "ls", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"pa'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": 'th": "."}'}}]},
    ])
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("c1", "ls", '{"path": "."}')]


def test_fragments_without_index_are_matched_by_id_then_to_the_latest_call():
    reply = _assemble([
        {"tool_calls": [{"id": "a", "function": {"name": "ls", "arguments": "{"}}]},
        {"tool_calls": [{"function": {"arguments": "}"}}]},
        {"tool_calls": [{"id": "b", "function": {"name": "cat", "arguments": "{}"}}]},
    ])
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("a", "ls", "{}"), ("b", "cat", "{}")]


def test_one_index_reused_for_calls_with_different_ids_gives_two_calls():
    reply = _assemble([
        {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "ls", "arguments": "{}"}}]},
        {"tool_calls": [{"index": 0, "id": "b", "function": {"name": "cat", "arguments": '{"p": 1}'}}]},
    ])
    assert [(c.id, c.name) for c in reply.tool_calls] == [("a", "ls"), ("b", "cat")]


def test_name_repeated_in_every_fragment_is_not_doubled_and_missing_id_is_generated():
    reply = _assemble([
        {"tool_calls": [{"index": 0, "function": {"name": "ls", "arguments": "{"}}]},
        {"tool_calls": [{"index": 0, "function": {"name": "ls", "arguments": "}"}}]},
    ])
    call = reply.tool_calls[0]
    assert call.name == "ls" and call.arguments == "{}" and call.id.startswith("call_")


def test_arguments_sent_as_an_object_are_serialised():
    reply = _assemble([{"tool_calls": [{"index": 0, "id": "x", "function": {"name": "ls",
                                                                          "arguments": {"path": "."}}}]}])
    assert json.loads(reply.tool_calls[0].arguments) == {"path": "."}


def test_a_call_that_never_got_a_name_is_not_returned():
    with pytest.raises(StreamInterruptedError, match="without a function name"):
        _assemble([{"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}])


def test_other_choices_are_ignored():
    asm = StreamAssembler()
    asm.feed({"choices": [{"index": 1, "delta": {"content": "other"}, "finish_reason": None}]})
    asm.feed(_chunk({"content": "mine"}, finish="stop"))
    assert asm.result().content == "mine"


def test_error_event_before_any_chunk_is_retried(fake_openai, make_client):
    server = fake_openai([stream_error_after(0, {"message": "overloaded", "type": "server_error"})])
    reply = make_client(server, sleep=lambda s: None).chat(USER)
    assert reply.content == "done" and len(server.requests) == 2


def test_error_event_saying_context_too_long_is_ContextLengthError(fake_openai, make_client):
    err = {"message": "This model's maximum context length is 4096 tokens", "type": "BadRequestError"}
    server = fake_openai([stream_error_after(0, err)])
    with pytest.raises(ContextLengthError):
        make_client(server, sleep=lambda s: None).chat(USER)
    assert len(server.requests) == 1


def test_error_event_after_chunks_is_an_interruption(fake_openai, make_client):
    server = fake_openai([stream_error_after(3, {"message": "internal"}, content="partial answer")])
    with pytest.raises(StreamInterruptedError, match="internal"):
        make_client(server, sleep=lambda s: None).chat(USER)
    assert len(server.requests) == 1
