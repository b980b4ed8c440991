"""The real loop with text protocols (XML, ReAct) against the fake server: actions reach the
same tools and approval, violations are corrected, three in a row end the turn, and a
server that refuses `tools` switches the session to XML once (kept on resume)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.agent.approval import ApprovalPolicy
from ctxagent.agent.replies import protocol_name
from ctxagent.agent.session import Session
from ctxagent.config.settings import Settings
from ctxagent.context.messages import pairing_errors
from ctxagent.llm.settings import ModelSettings
from ctxagent.protocols import OBSERVATION_PREFIX, PROTOCOL_ERROR
from tests.agent.conftest import ChangeTool, EchoTool
from tests.support.fake_openai import error, text

OLLAMA_400 = {"error": {"message": "registry.ollama.ai/library/gemma3:1b does not support tools",
                        "type": "api_error", "param": None, "code": None}}


def shown(events, kind: str) -> str:
    return "".join(e.text for e in events if e.type == kind)


XML_ACTION = '<thinking>\nsay it\n</thinking>\n<tool name="echo">{"text": "hi"}</tool>'
REACT_ACTION = 'Thought: say it\nAction: echo[{"text": "hi"}]'


@pytest.mark.parametrize("protocol, action, finish", [
    ("xml", XML_ACTION, "<finish>All done.</finish>"),
    ("react", REACT_ACTION, "Thought: done\nAction: Finish[All done.]"),
])
def test_a_text_protocol_runs_the_same_tools(make_agent, protocol, action, finish) -> None:
    echo = EchoTool()
    agent, server, events = make_agent([text(action), text(finish)], tools=[echo], model_opts={"protocol": protocol})
    end = agent.run_turn("say hi")
    assert (end.reason, end.answer, echo.calls) == ("finished", "All done.", [{"text": "hi"}])
    first, second = server.requests
    assert "tools" not in first and "## echo" in first["messages"][0]["content"]
    assert second["messages"][-1] == {"role": "user", "content": OBSERVATION_PREFIX + "echo: hi"}
    assert second["messages"][-2] == {"role": "assistant", "content": action}  # re-encoded as written
    history = agent.session.history
    assert history[1]["tool_calls"][0]["function"] == {"name": "echo", "arguments": '{"text": "hi"}'}
    assert history[1]["content"] == "say it" and history[-1]["content"] == "All done."
    assert not pairing_errors(history)
    assert shown(events, "text_delta") == "All done."  # never the raw tags
    assert "say it" in shown(events, "reasoning_delta")


def test_an_xml_action_asks_the_same_approval(make_agent) -> None:
    change = ChangeTool()
    agent, server, events = make_agent(
        [text('<tool name="change">{"path": "a.py"}</tool>'), text("<finish>ok</finish>")], tools=[change],
        model_opts={"protocol": "xml"}, approval=ApprovalPolicy(ask=lambda q: "n not that file"))
    assert agent.run_turn("change a.py").reason == "finished"
    assert change.calls == [] and any(e.type == "approval_request" for e in events)
    assert "not that file" in server.requests[1]["messages"][-1]["content"]


def test_python_block_without_python_exec_says_how_to_enable_it(make_agent) -> None:
    agent, server, _ = make_agent([text("<python>print(1)</python>"), text("<finish>ok</finish>")],
                                  tools=[EchoTool()], model_opts={"protocol": "xml"})
    assert agent.run_turn("compute").reason == "finished"
    observation = server.requests[1]["messages"][-1]["content"]
    assert "python_exec is not available in this mode" in observation and "workspace-write" in observation


def test_a_violation_is_corrected_and_the_turn_goes_on(make_agent) -> None:
    echo = EchoTool()
    agent, server, events = make_agent([text("I would echo hi."), text('<tool name="echo">{"text": "hi"}</tool>'),
                                        text("<finish>done</finish>")], tools=[echo], model_opts={"protocol": "xml"})
    end = agent.run_turn("say hi")
    assert (end.reason, end.answer, echo.calls) == ("finished", "done", [{"text": "hi"}])
    correction = server.requests[1]["messages"][-1]["content"]
    assert "no action" in correction and '<tool name="TOOL_NAME">' in correction
    assert server.requests[1]["messages"][-2]["content"] == "I would echo hi."
    assert agent.session.history[1]["tool_calls"][0]["function"]["name"] == PROTOCOL_ERROR
    assert any(e.type == "notice" and "(1/3)" in e.message for e in events)
    assert not pairing_errors(agent.session.history)


def test_three_violations_in_a_row_end_the_turn_with_a_clear_error(make_agent) -> None:
    agent, server, events = make_agent([text("hmm"), text("Action: echo"), text("still thinking"), text("never")],
                                       tools=[EchoTool()], model_opts={"protocol": "react"})
    end = agent.run_turn("say hi")
    assert end.reason == "error" and len(server.requests) == 3
    assert "broke the react protocol 3 times in a row" in end.message and "--protocol" in end.message
    assert [e.kind for e in events if e.type == "error"] == ["ProtocolError"]
    assert not pairing_errors(agent.session.history)


def test_violations_must_be_in_a_row(make_agent) -> None:
    script = [text("a"), text("b"), text('<tool name="echo">{}</tool>'), text("c"), text("d"),
              text("<finish>ok</finish>")]
    agent, _, _ = make_agent(script, tools=[EchoTool()], model_opts={"protocol": "xml"})
    assert agent.run_turn("x").reason == "finished"


def test_a_server_refusing_tools_switches_to_xml_once_and_resume_keeps_it(make_agent, tmp_path) -> None:
    echo = EchoTool()
    agent, server, events = make_agent([error(400, OLLAMA_400), text('<tool name="echo">{"text": "x"}</tool>'),
                                        text("<finish>fine</finish>")], tools=[echo])
    end = agent.run_turn("say x")
    assert (end.reason, end.answer, echo.calls) == ("finished", "fine", [{"text": "x"}])
    assert "tools" in server.requests[0] and all("tools" not in r for r in server.requests[1:])
    [notice] = [e for e in events if e.type == "notice"]
    assert "does not support tools" in notice.message and "xml" in notice.message
    assert agent.protocol.name == "xml"
    resumed = Session.resume(tmp_path, agent.session.id)
    assert resumed.protocol == "xml"


@pytest.mark.parametrize("status, message", [
    (500, "tools param requires --jinja flag"),  # llama.cpp
    (400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'),  # vLLM
])
def test_other_servers_refusing_tools_switch_too_without_retries(make_agent, status, message) -> None:
    body = {"error": {"message": message, "type": "server_error" if status == 500 else "BadRequestError"}}
    agent, server, _ = make_agent([error(status, body), text("<finish>ok</finish>")], tools=[EchoTool()])
    assert agent.run_turn("x").reason == "finished" and len(server.requests) == 2


def test_an_xml_session_refused_again_is_an_error_not_a_loop(make_agent) -> None:
    agent, server, _ = make_agent([error(400, OLLAMA_400)] * 3, tools=[EchoTool()], model_opts={"protocol": "xml"})
    end = agent.run_turn("x")
    assert end.reason == "error" and len(server.requests) == 1


def test_json_arguments_that_are_not_json_come_back_as_a_tool_result(make_agent) -> None:
    echo = EchoTool()
    agent, server, _ = make_agent([text('<tool name="echo">{"text": oops}</tool>'), text("<finish>ok</finish>")],
                                  tools=[echo], model_opts={"protocol": "xml"})
    assert agent.run_turn("x").reason == "finished" and echo.calls == []
    assert "not valid JSON" in server.requests[1]["messages"][-1]["content"]
    assert agent.session.history[1]["tool_calls"][0]["function"]["arguments"] == '{"text": oops}'  # kept raw (L01)


@pytest.mark.parametrize("configured, source, remembered, expected", [
    ("native", "defaults", "xml", "xml"),  # the session switched: a resume goes on in xml
    ("native", "flag --protocol", "xml", "native"),  # --protocol native goes back to native tool calls
    ("react", "/home/u/.config/ctxagent/config.toml", "xml", "react"),  # a text protocol chosen on purpose
    ("native", "defaults", None, "native"),
])
def test_which_protocol_a_session_runs_with(configured, source, remembered, expected) -> None:
    settings = Settings(model=ModelSettings(model="m", protocol=configured), sources={"model.protocol": source})
    session = Session(id="s", repo=Path("."), protocol=remembered)
    assert protocol_name(settings, session) == expected
