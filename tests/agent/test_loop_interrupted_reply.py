"""A reply cut off by Ctrl-C stays in the history, marked (issue 15, item 3): the next request
shows the model what it had said and that the user interrupted it, never a bridging "Ok."."""

from __future__ import annotations

import threading

from ctxagent.context.messages import pairing_errors
from tests.support.fake_openai import text, tool_calls

MARK = "[interrupted by the user]"


def cancel_on_first_delta(cancel: threading.Event):
    return (lambda e: cancel.set() if e.type == "text_delta" else None,)


def test_the_next_request_holds_the_partial_reply_and_the_mark(make_agent) -> None:
    cancel = threading.Event()
    agent, server, _ = make_agent([text("first part of a long answer " * 40, chunk_size=3, delay=0.01),
                                   text("fine")], sinks=cancel_on_first_delta(cancel))
    assert agent.run_turn("explain", cancel=cancel).reason == "interrupted"
    assert agent.run_turn("shorter please").reason == "finished"
    messages = server.requests[-1]["messages"]
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "user"]
    kept = messages[2]["content"]
    assert kept.startswith("fir") and kept.endswith(f"\n\n{MARK}")
    assert all(m.get("content") != "Ok." for m in messages)


def test_ctrl_c_before_any_text_leaves_the_mark_alone(make_agent) -> None:
    cancel = threading.Event()
    cancel.set()
    agent, _, _ = make_agent([text("never asked")])
    assert agent.run_turn("x", cancel=cancel).reason == "interrupted"
    assert agent.session.history[-1] == {"role": "assistant", "content": MARK}


def test_ctrl_c_while_a_tool_runs_adds_no_reply(make_agent) -> None:
    agent, _, _ = make_agent([tool_calls([("slow", '{"text": "a"}')])])
    assert agent.run_turn("x").reason == "interrupted"
    assert [m["role"] for m in agent.session.history] == ["user", "assistant", "tool"]
    assert pairing_errors(agent.session.history) == []

