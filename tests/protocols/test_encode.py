"""Text protocols at the request boundary: a native-form history written as text, the tool
guide generated from the tools' schemas, and what the model wrote read back the same."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ctxagent.agent.toolset import build_registry
from ctxagent.config.settings import Settings
from ctxagent.context.messages import history_units
from ctxagent.llm.settings import ModelSettings
from ctxagent.protocols import OBSERVATION_PREFIX, PROTOCOL_ERROR, get_protocol
from ctxagent.protocols.base import violation_call
from ctxagent.protocols.guide import type_name

TERMINAL = {"type": "function", "function": {"name": "terminal", "description": "Run a read-only command.",
                                             "parameters": {"type": "object", "required": ["command"],
                                                            "properties": {"command": {"type": "string"}}}}}


def call(call_id: str, name: str, args: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def history() -> list[dict]:
    bad = violation_call("I would list the files.", "the reply has no action")
    return [
        {"role": "system", "content": "You are ctxagent."},
        {"role": "user", "content": "What is in the repo?"},
        bad,
        {"role": "tool", "tool_call_id": bad["tool_calls"][0]["id"], "content": "Protocol error: use a block."},
        {"role": "assistant", "content": "list first", "tool_calls": [call("c1", "terminal", {"command": "ls"})],
         "reasoning_content": "hidden"},
        {"role": "tool", "tool_call_id": "c1", "content": "README.md\nsrc"},
        {"role": "assistant", "content": "A README and src/."},
        {"role": "user", "content": "Read it."},
        {"role": "assistant", "content": None, "tool_calls": [call("c2", "terminal", {"command": "cat README.md"})]},
        {"role": "tool", "tool_call_id": "c2", "content": "not executed: interrupted"},
        {"role": "user", "content": "Go on."},
    ]


@pytest.mark.parametrize("name", ["xml", "react"])
def test_encode_writes_the_history_as_text(name):
    messages = history()
    before = copy.deepcopy(messages)
    sent, tools = get_protocol(name).encode(messages, [TERMINAL])
    assert messages == before and tools is None
    assert all("tool_calls" not in m and m["role"] != "tool" for m in sent)
    assert sent[0]["content"].startswith("You are ctxagent.") and "## terminal" in sent[0]["content"]
    roles = [m["role"] for m in sent]
    assert all(a != b for a, b in zip(roles[1:], roles[2:])), roles  # user and assistant alternate
    assert sent[2]["content"] == "I would list the files."  # a broken reply goes back as it was written
    assert sent[3]["content"] == "Protocol error: use a block."  # its correction has no Observation prefix
    assert sent[5]["content"] == OBSERVATION_PREFIX + "README.md\nsrc"
    assert sent[4]["reasoning_content"] == "hidden"
    assert sent[-1]["content"] == OBSERVATION_PREFIX + "not executed: interrupted\n\nGo on."  # joined, not adjacent
    decoded = get_protocol(name).decode(sent[4]["content"], [TERMINAL])
    assert (decoded.kind, decoded.thought, decoded.name, json.loads(decoded.arguments)) == (
        "action", "list first", "terminal", {"command": "ls"})
    assert get_protocol(name).decode(sent[6]["content"], [TERMINAL]).answer == "A README and src/."


def test_native_encode_is_the_request_itself():
    messages = history()
    assert get_protocol("native").encode(messages, [TERMINAL]) == (messages, [TERMINAL])
    assert get_protocol("native").encode(messages, []) == (messages, None)


def test_a_violation_is_one_history_unit_with_its_correction():
    units = history_units(history()[1:])
    assert [len(u) for u in units] == [1, 2, 2, 1, 1, 2, 1]
    assert units[1][0]["tool_calls"][0]["function"]["name"] == PROTOCOL_ERROR


@pytest.mark.parametrize("name", ["xml", "react"])
def test_the_guide_names_every_tool_and_argument_of_the_real_registry(name, tmp_path: Path):
    registry = build_registry(tmp_path, Settings(model=ModelSettings(model="m")))
    schemas = registry.schemas()
    guide = get_protocol(name).guide(schemas)
    for schema in schemas:
        function = schema["function"]
        assert f"## {function['name']}\n{function['description'].strip()}" in guide
        for key, spec in function["parameters"].get("properties", {}).items():
            assert f"- {key} ({type_name(spec)}" in guide, (function["name"], key)


def test_the_guide_offers_python_only_with_python_exec():
    python = {"type": "function", "function": {"name": "python_exec", "description": "Run Python.",
                                               "parameters": {"type": "object", "properties": {}}}}
    assert "<python>" not in get_protocol("xml").guide([TERMINAL])
    assert "<python>" in get_protocol("xml").guide([TERMINAL, python])


def test_type_names():
    assert type_name({"anyOf": [{"type": "integer"}, {"type": "null"}]}) == "integer"
    assert type_name({"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]}) == (
        "array of string or string")
    assert type_name({"$ref": "#/$defs/X"}) == "object"
