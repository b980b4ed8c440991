"""The offline model's prompt: turns, tool instructions, tool results, families."""

from __future__ import annotations

import pytest

from ctxagent.llm.local.format import (
    FAMILIES,
    describe_parameters,
    family,
    format_call,
    render_prompt,
)

TERMINAL = {"type": "function", "function": {
    "name": "terminal", "description": "Run a read-only command.",
    "parameters": {"type": "object", "properties": {"command": {"type": "string", "description": "The command line."}},
                   "required": ["command"]}}}


def _history() -> list[dict]:
    return [
        {"role": "system", "content": "You are ctxagent."},
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "ls"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "README.md\nctxagent"},
    ]


def test_chatml_prompt_has_turns_in_order_and_ends_with_open_assistant_turn() -> None:
    prompt = render_prompt(_history(), [TERMINAL], FAMILIES["chatml"])
    assert prompt.startswith("<|im_start|>system\nYou are ctxagent.")
    order = [prompt.index(s) for s in ("<|im_start|>user\nList the files.", "<|im_start|>assistant\n<tool_call>",
                                       '<tool_response name="terminal">\nREADME.md')]
    assert order == sorted(order)
    assert prompt.endswith("<|im_start|>assistant\n")


def test_tool_instructions_list_each_tool_with_its_arguments() -> None:
    prompt = render_prompt(_history()[:2], [TERMINAL], FAMILIES["chatml"])
    system = prompt.split("<|im_end|>")[0]
    assert "- terminal: Run a read-only command." in system
    assert "command (string, required): The command line." in system
    assert "<tool_call>" in system


def test_no_tools_means_no_tool_instructions() -> None:
    prompt = render_prompt(_history()[:2], [], FAMILIES["chatml"])
    assert "<tool_call>" not in prompt


def test_reminder_follows_a_tool_result_in_the_same_user_turn() -> None:
    prompt = render_prompt(_history(), [TERMINAL], FAMILIES["chatml"])
    last_user = prompt.rsplit("<|im_start|>user\n", 1)[1]
    assert last_user.startswith('<tool_response name="terminal">')
    assert "The request was: List the files." in last_user
    assert "answer in plain text now" in last_user
    final = render_prompt(_history(), [TERMINAL], FAMILIES["chatml"], answer_now=True).rsplit("user\n", 1)[1]
    assert final.count("Now answer in plain text") == 1 and "one more tool call" not in final


def test_assistant_tool_call_is_rendered_as_the_model_writes_it() -> None:
    prompt = render_prompt(_history(), [TERMINAL], FAMILIES["chatml"])
    assert format_call("terminal", '{"command": "ls"}') in prompt
    assert format_call("t", "not json").endswith('"arguments": "not json"}\n</tool_call>')


def test_gemma_has_no_system_turn_system_text_opens_first_user_turn() -> None:
    prompt = render_prompt(_history(), [TERMINAL], FAMILIES["gemma"])
    assert "<start_of_turn>system" not in prompt
    assert prompt.startswith("<start_of_turn>user\nYou are ctxagent.")
    assert "<start_of_turn>model\n<tool_call>" in prompt
    assert prompt.endswith("<start_of_turn>model\n")


def test_consecutive_same_role_turns_are_merged() -> None:
    msgs = [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}]
    prompt = render_prompt(msgs, [], FAMILIES["chatml"])
    assert prompt.count("<|im_start|>user") == 1
    assert "one\n\ntwo" in prompt


def test_several_tool_results_and_list_content_parts() -> None:
    msgs = [{"role": "user", "content": [{"type": "text", "text": "go"}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "a", "function": {"name": "x", "arguments": "{}"}},
                {"id": "b", "function": {"name": "y", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "A"},
            {"role": "tool", "tool_call_id": "b", "content": "B"}]
    prompt = render_prompt(msgs, [], FAMILIES["gemma"])
    assert "<start_of_turn>user\ngo" in prompt
    assert '<tool_response name="x">\nA' in prompt and '<tool_response name="y">\nB' in prompt
    assert prompt.count("<start_of_turn>user") == 2


def test_describe_parameters_types_enum_optional_and_empty() -> None:
    schema = {"properties": {"mode": {"enum": ["a", "b"]}, "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                             "paths": {"type": "array", "items": {"type": "string"}}}, "required": ["mode"]}
    text = describe_parameters(schema)
    assert 'mode (one of "a"|"b", required)' in text
    assert "n (integer, optional)" in text and "paths (array of string, optional)" in text
    assert describe_parameters({}) == "none"


def test_unknown_family_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="chatml"):
        family("llama-9")
