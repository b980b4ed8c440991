"""The XML and ReAct parsers: strict about structure (one action per reply), tolerant about
white space, code fences, tag and label case; what an action decodes to."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxagent.protocols import get_protocol
from ctxagent.protocols.react import parse_react
from ctxagent.protocols.xml import parse_xml

TOOLS = [{"type": "function", "function": {"name": name, "description": "d",
                                           "parameters": {"type": "object", "properties": props,
                                                          "required": list(props)}}}
         for name, props in (("terminal", {"command": {"type": "string"}}),
                             ("apply_patch", {"patch": {"type": "string"}}),
                             ("python_exec", {"source": {"type": "string"}}))]


# ---------------------------------------------------------------- XML

def test_xml_tool_with_thinking():
    got = parse_xml('<thinking>\nlook first\n</thinking>\n<tool name="terminal">{"command": "ls"}</tool>', TOOLS)
    assert (got.kind, got.thought, got.name, json.loads(got.arguments)) == ("action", "look first", "terminal",
                                                                            {"command": "ls"})


@pytest.mark.parametrize("reply", [
    '<TOOL NAME="terminal">{"command": "ls"}</TOOL>',
    "< tool name='terminal' >\n  {\"command\": \"ls\"}\n</ Tool >",
    '```xml\n<tool name="terminal">{"command": "ls"}</tool>\n```',
    '<tool name="terminal">\n```json\n{"command": "ls"}\n```\n</tool>',
    '<tool name="terminal">{"command": "ls"}\n```\n</tool>',  # a trailing fence only
    '<tool name=terminal>{"command": "ls"}</tool>',
    '<tool name="terminal">{"command": "ls"}',  # the server stopped on </tool>
    'Let me list the files.\n<tool name="terminal">{"command": "ls"}</tool>\nI will wait for the result.',
])
def test_xml_tolerated_forms(reply):
    got = parse_xml(reply, TOOLS)
    assert got.kind == "action" and got.name == "terminal" and json.loads(got.arguments) == {"command": "ls"}, got


def test_xml_python_block_goes_to_python_exec_with_its_schema_argument():
    got = parse_xml("<thinking>count</thinking><python>\n```python\nprint(1 + 1)\n```\n</python>", TOOLS)
    assert (got.kind, got.name, json.loads(got.arguments)) == ("action", "python_exec", {"source": "print(1 + 1)"})
    assert json.loads(parse_xml("<python>x = 1</python>", []).arguments) == {"code": "x = 1"}


def test_xml_finish_keeps_the_answer_and_its_code_blocks():
    answer = "Done.\n```python\nprint('hi')\n```"
    got = parse_xml(f"<thinking>all good</thinking>\n<Finish>\n{answer}\n</Finish>", TOOLS)
    assert (got.kind, got.answer, got.thought) == ("finish", answer, "all good")


def test_xml_tags_inside_a_block_or_the_thinking_are_not_actions():
    got = parse_xml('<thinking>I could use <tool name="x">{}</tool></thinking>'
                    '<finish>write <tool name="terminal">{...}</tool> to act</finish>', TOOLS)
    assert got.kind == "finish" and "<tool" in got.answer


@pytest.mark.parametrize("reply, words", [
    ("I think the answer is 4.", "no action"),
    ('<tool name="terminal">{"command": "ls"}</tool>\n<tool name="terminal">{"command": "pwd"}</tool>', "2 actions"),
    ('<tool name="terminal">{}</tool><finish>done</finish>', "2 actions"),
    ('<tool>{"command": "ls"}</tool>', "no name"),
    ('<tool name="terminal">{"command": "ls"}</tool>\nObservation: a.py b.py', "made up"),
    ('<tool name="terminal">{"command": "ls"} <finish>x</finish>', "not closed"),
])
def test_xml_violations(reply, words):
    got = parse_xml(reply, TOOLS)
    assert got.kind == "violation" and words in got.problem, got


def test_xml_cut_off_block_is_a_violation():
    got = parse_xml('<tool name="apply_patch">{"patch": "*** Begin', TOOLS, cut_off=True)
    assert got.kind == "violation" and "token limit" in got.problem


# ---------------------------------------------------------------- ReAct

def test_react_action_and_thought():
    got = parse_react('Thought: look first\nAction: terminal[{"command": "ls"}]', TOOLS)
    assert (got.kind, got.thought, got.name, json.loads(got.arguments)) == ("action", "look first", "terminal",
                                                                            {"command": "ls"})


@pytest.mark.parametrize("reply", [
    'thought: look\naction: terminal[{"command": "ls"}]',
    '**Thought**: look\n**Action**: terminal[{"command": "ls"}]',
    '思考：先看看\n行动：terminal[{"command": "ls"}]',
    'Thought: look\nterminal[{"command": "ls"}]',  # the bare line of the HelloCodeAgentCli prompts
    '```\nThought: look\nAction: terminal[{"command": "ls"}]\n```',
    'Thought: look\nAction: terminal[\n```json\n{"command": "ls"}\n```\n]',
    'Thought: look\nAction:   `terminal[{"command": "ls"}]`   ',
    'Thought: look\nAction: terminal[{"command": "ls"}]\nThought: then I will read it',
])
def test_react_tolerated_forms(reply):
    got = parse_react(reply, TOOLS)
    assert got.kind == "action" and got.name == "terminal" and json.loads(got.arguments) == {"command": "ls"}, got


def test_react_finish_over_several_lines_and_with_brackets():
    answer = "Renamed it.\nSee a[0] and b[1]."
    for reply in (f"Thought: done\nAction: Finish[{answer}]", f"Thought: done\nFinish[{answer}]"):
        got = parse_react(reply, TOOLS)
        assert (got.kind, got.answer, got.thought) == ("finish", answer, "done")


def test_react_brackets_in_prose_are_not_actions():
    got = parse_react("Thought: the type is list[int] here\nAction: Finish[it is list[int]]", TOOLS)
    assert got.kind == "finish" and got.answer == "it is list[int]"


@pytest.mark.parametrize("reply, words", [
    ("The answer is 4.", "no action"),
    ('Action: terminal[{"command": "ls"}]\nAction: terminal[{"command": "pwd"}]', "2 actions"),
    ('Thought: x\nterminal[{"command": "ls"}]\nFinish[done]', "2 actions"),
    ("Thought: x\nAction: terminal", "NAME[...]"),
    ('Action: terminal[{"command": "ls"}]\nObservation: a.py', "made up"),
])
def test_react_violations(reply, words):
    got = parse_react(reply, TOOLS)
    assert got.kind == "violation" and words in got.problem, got


# ---------------------------------------------------------------- round trips (hypothesis)

_words = st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd"), whitelist_characters=" .,'-_/"),
                 min_size=1, max_size=30).map(str.strip).filter(bool)
_args = st.dictionaries(st.sampled_from(["command", "path", "query", "text"]), _words, min_size=1, max_size=3)
_space = st.sampled_from(["", " ", "\n", "\n\n", "  \n", "\t"])


def _case(word: str, how: int) -> str:
    return [word, word.upper(), word.capitalize()][how]


@settings(max_examples=150, deadline=None)
@given(thought=_words, args=_args, pad=st.tuples(_space, _space, _space), how=st.integers(0, 2),
       fenced=st.booleans(), protocol=st.sampled_from(["xml", "react"]))
def test_rendered_action_with_noise_decodes_to_the_same_call(thought, args, pad, how, fenced, protocol):
    proto = get_protocol(protocol)
    raw = json.dumps(args)
    text = proto.render_action(thought, "terminal", raw, TOOLS)
    if protocol == "xml":
        text = text.replace("<tool", "<" + _case("tool", how)).replace("</tool>", "</" + _case("tool", how) + ">")
        text = text.replace("<thinking>", "<" + _case("thinking", how) + ">").replace(
            "</thinking>", "</" + _case("thinking", how) + ">")
    else:
        text = text.replace("Thought:", _case("thought", how) + ":").replace("Action:", _case("action", how) + ":")
    text = f"{pad[0]}{text}{pad[1]}"
    if fenced:
        text = f"```\n{text}\n```{pad[2]}"
    got = proto.decode(text, TOOLS)
    assert got.kind == "action" and got.name == "terminal" and json.loads(got.arguments) == args, (text, got)
    assert got.thought == thought


@settings(max_examples=100, deadline=None)
@given(first=_args, second=_args, sep=_space, protocol=st.sampled_from(["xml", "react"]))
def test_two_actions_in_one_reply_are_refused(first, second, sep, protocol):
    proto = get_protocol(protocol)
    text = (proto.render_action("", "terminal", json.dumps(first), TOOLS) + "\n" + sep
            + proto.render_action("", "terminal", json.dumps(second), TOOLS))
    got = proto.decode(text, TOOLS)
    assert got.kind == "violation" and "2 actions" in got.problem


@settings(max_examples=100, deadline=None)
@given(answer=_words, protocol=st.sampled_from(["xml", "react"]), pad=_space)
def test_rendered_finish_decodes_to_the_same_answer(answer, protocol, pad):
    proto = get_protocol(protocol)
    got = proto.decode(pad + proto.render_finish(answer) + pad, TOOLS)
    assert (got.kind, got.answer) == ("finish", answer)
