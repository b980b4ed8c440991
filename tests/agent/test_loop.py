"""The real loop + real LLMClient against the fake OpenAI server: L01, C02, limits, approval, compaction."""

from __future__ import annotations

import json
import threading

import pytest

from ctxagent.agent.approval import ApprovalPolicy
from ctxagent.context.messages import pairing_errors
from tests.agent.conftest import API_KEY, ChangeTool, CtrlCTool, EchoTool
from tests.support.fake_openai import error, text, tool_calls


def tool_messages(agent) -> list[dict]:
    return [m for m in agent.session.history if m["role"] == "tool"]


def kinds(events) -> list[str]:
    return [e.type for e in events if e.type not in ("text_delta", "reasoning_delta")]


def test_finishes_when_the_model_answers_without_tools(make_agent) -> None:
    agent, server, events = make_agent([tool_calls([("echo", '{"text": "hi"}')]), text("All done.")])
    end = agent.run_turn("say hi")
    assert (end.reason, end.answer, end.steps) == ("finished", "All done.", 2)
    assert kinds(events) == ["turn_start", "usage", "tool_call", "tool_result", "usage", "turn_end"]
    assert server.requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "call_1_0", "content": "echo: hi"}
    assert server.requests[0]["messages"][0] == {"role": "system", "content": "You are a test agent."}
    assert {t["function"]["name"] for t in server.requests[0]["tools"]} == {"echo", "change", "crash", "slow"}
    assert "".join(e.text for e in events if e.type == "text_delta") == "All done."
    assert end.tokens > 0 and end.limits["max_steps"] == 40


@pytest.mark.parametrize("raw, step_kind", [
    ('{"text": "src/ma', "length"),
    ('{"a":1}{"b":2}', "tool_calls"),
    ("[1, 2]", "tool_calls"),
])
def test_L01_invalid_arguments_are_not_run_and_model_is_told(make_agent, raw: str, step_kind: str) -> None:
    echo = EchoTool()
    step = {"type": step_kind, "calls": [{"name": "echo", "arguments": raw}]}
    agent, server, _ = make_agent([step, text("ok")], tools=[echo])
    assert agent.run_turn("x").reason == "finished"
    assert echo.calls == []
    [result] = tool_messages(agent)
    assert "not valid JSON" in result["content"] and "Resend" in result["content"]
    assert ("cut off" in result["content"]) == (step_kind == "length")
    assistant = agent.session.history[1]
    assert assistant["tool_calls"][0]["function"]["arguments"] == raw  # raw kept
    records = [json.loads(line) for line in agent.session.path.read_text(encoding="utf-8").splitlines()]
    recorded = [r["message"] for r in records if r["kind"] == "message" and r["message"].get("tool_calls")]
    assert recorded[0]["tool_calls"][0]["function"]["arguments"] == raw  # raw kept in the transcript


def test_L01_empty_arguments_mean_empty_object_and_valid_pass_unchanged(make_agent) -> None:
    echo = EchoTool()
    agent, _, _ = make_agent([tool_calls([("echo", ""), ("echo", '{"text": "a\\\\d+"}')]), text("ok")], tools=[echo])
    agent.run_turn("x")
    assert echo.calls == [{"text": ""}, {"text": "a\\d+"}]


def test_unknown_tool_lists_the_tool_names(make_agent) -> None:
    agent, _, events = make_agent([tool_calls([("rm_rf", "{}")]), text("ok")])
    agent.run_turn("x")
    [result] = tool_messages(agent)
    assert "rm_rf" in result["content"] and "echo, change, crash, slow" in result["content"]
    assert [e.status for e in events if e.type == "tool_result"] == ["unknown"]


def test_crashing_tool_gets_an_error_result_and_the_turn_goes_on(make_agent) -> None:
    agent, _, _ = make_agent([tool_calls([("crash", "{}"), ("echo", '{"text": "after"}')]), text("ok")])
    assert agent.run_turn("x").reason == "finished"
    results = tool_messages(agent)
    assert "boom" in results[0]["content"] and results[1]["content"] == "echo: after"


def test_C02_ctrl_c_mid_tools_gives_synthetic_results_and_session_survives(make_agent) -> None:
    echo = EchoTool()
    agent, server, events = make_agent([tool_calls([("echo", "{}"), ("slow", "{}"), ("echo", '{"text":"never"}')]),
                                        text("back")], tools=[echo, CtrlCTool()])
    end = agent.run_turn("x")
    assert end.reason == "interrupted"
    assert [m["content"] for m in tool_messages(agent)] == ["echo: ", "not executed: interrupted",
                                                             "not executed: interrupted"]
    assert echo.calls == [{"text": ""}]
    assert pairing_errors(agent.session.history) == []
    assert agent.run_turn("go on").answer == "back"  # the session survives
    assert pairing_errors(server.requests[-1]["messages"]) == []


def test_cancel_event_before_the_model_call_interrupts(make_agent) -> None:
    agent, server, _ = make_agent([text("never")])
    cancel = threading.Event()
    cancel.set()
    assert agent.run_turn("x", cancel=cancel).reason == "interrupted"
    assert server.requests == []


def test_cancel_while_streaming_interrupts(make_agent) -> None:
    cancel = threading.Event()
    agent, _, events = make_agent([text("a long answer " * 50, chunk_size=2, delay=0.01)],
                                  sinks=(lambda e: cancel.set() if e.type == "text_delta" else None,))
    end = agent.run_turn("x", cancel=cancel)
    assert end.reason == "interrupted"
    assert [m["role"] for m in agent.session.history] == ["user", "assistant"]
    kept = agent.session.history[-1]["content"]  # what was streamed, marked (issue 15, item 3)
    assert kept.startswith("a") and kept.endswith("\n\n[interrupted by the user]")
    assert "a long answer " * 50 not in kept


def test_max_steps_stops_with_its_reason(make_agent) -> None:
    loop_forever = [tool_calls([("echo", "{}")]) for _ in range(5)]
    agent, server, _ = make_agent(loop_forever, max_steps=3)
    end = agent.run_turn("x")
    assert (end.reason, end.steps, len(server.requests)) == ("max_steps", 3, 3)
    assert "max_steps = 3" in end.message and pairing_errors(agent.session.history) == []


def test_max_task_tokens_stops_with_its_reason(make_agent) -> None:
    agent, _, _ = make_agent([tool_calls([("echo", "{}")], usage={"prompt_tokens": 600, "completion_tokens": 10})] * 3,
                             max_task_tokens=1000)
    end = agent.run_turn("x")
    assert (end.reason, end.steps, end.tokens) == ("max_tokens", 2, 1220)


def test_max_cost_stops_when_prices_are_known(make_agent) -> None:
    agent, _, _ = make_agent([tool_calls([("echo", "{}")], usage={"prompt_tokens": 1_000_000, "completion_tokens": 0})] * 3,
                             max_cost_usd=1.5, max_task_tokens=10**9,
                             model_opts={"price_prompt_per_mtok": 1.0, "price_completion_per_mtok": 2.0})
    end = agent.run_turn("x")
    assert (end.reason, end.steps, end.cost_usd) == ("max_cost", 2, 2.0)


def test_wall_time_stops_with_its_reason(make_agent) -> None:
    agent, _, _ = make_agent([tool_calls([("echo", "{}")], delay=0.02)] * 3, wall_time_s=0.01)
    end = agent.run_turn("x")
    assert end.reason == "wall_time" and end.steps <= 1 and "wall_time_s" in end.message


def test_approval_yes_runs_the_tool(make_agent) -> None:
    change = ChangeTool()
    agent, _, events = make_agent([tool_calls([("change", '{"path": "a.py"}')]), text("ok")], tools=[change],
                                  approval=ApprovalPolicy(ask=lambda q: "y"))
    agent.run_turn("x")
    assert change.calls == ["a.py"]
    [request] = [e for e in events if e.type == "approval_request"]
    assert "+new" in request.preview and not request.auto


def test_approval_no_with_reason_reaches_the_model(make_agent) -> None:
    change = ChangeTool()
    agent, server, _ = make_agent([tool_calls([("change", '{"path": "a.py"}')]), text("ok")], tools=[change],
                                  approval=ApprovalPolicy(ask=lambda q: "n use b.py instead"))
    agent.run_turn("x")
    assert change.calls == []
    sent = server.requests[1]["messages"][-1]["content"]
    assert "declined" in sent and "use b.py instead" in sent


def test_approval_all_covers_the_rest_of_the_session(make_agent) -> None:
    change = ChangeTool()
    answers = iter(["a"])
    agent, _, events = make_agent([tool_calls([("change", '{"path": "a.py"}'), ("change", '{"path": "b.py"}')]),
                                   text("ok"), tool_calls([("change", '{"path": "c.py"}')]), text("ok")],
                                  tools=[change], approval=ApprovalPolicy(ask=lambda q: next(answers)))
    agent.run_turn("x")
    agent.run_turn("y")
    assert change.calls == ["a.py", "b.py", "c.py"]
    assert [e.auto for e in events if e.type == "approval_request"] == [False, True, True]


def test_invalid_preview_is_an_error_result_without_asking(make_agent) -> None:
    asked = []
    agent, _, _ = make_agent([tool_calls([("change", '{"path": "bad"}')]), text("ok")], tools=[ChangeTool()],
                             approval=ApprovalPolicy(ask=lambda q: asked.append(q) or "y"))
    agent.run_turn("x")
    assert asked == [] and "bad is not a file" in tool_messages(agent)[0]["content"]


def test_context_length_error_compacts_and_retries_once(make_agent) -> None:
    too_long = error(400, {"error": {"message": "This model's maximum context length is 8192 tokens. However, your "
                                                "messages resulted in 9000 tokens.", "type": "invalid_request_error",
                                     "code": "context_length_exceeded"}})
    agent, server, events = make_agent([tool_calls([("echo", json.dumps({"text": "x" * 5000}))]), too_long,
                                        text("fits now")])
    end = agent.run_turn("x")
    assert end.reason == "finished" and end.answer == "fits now"
    [compaction] = [e for e in events if e.type == "compaction"]
    assert compaction.method == "mask"
    assert len(server.requests[2]["messages"][-1]["content"]) < 5000


def test_context_length_error_twice_is_an_error_not_a_crash(make_agent) -> None:
    too_long = error(400, {"error": {"message": "maximum context length exceeded", "type": "invalid_request_error",
                                     "code": "context_length_exceeded"}})
    agent, server, events = make_agent([too_long, too_long, text("never")])
    end = agent.run_turn("x")
    assert end.reason == "error" and len(server.requests) == 2
    assert [e.type for e in events].count("compaction") == 1


def test_server_errors_end_the_turn_with_error_and_session_survives(make_agent) -> None:
    agent, _, events = make_agent([error(500)] * 3 + [text("recovered")])
    end = agent.run_turn("x")
    assert end.reason == "error" and "500" in end.message
    assert any(e.type == "error" for e in events)
    assert agent.run_turn("again").answer == "recovered"


def test_api_key_never_reaches_the_state_dir(make_agent) -> None:
    agent, _, _ = make_agent([tool_calls([("echo", json.dumps({"text": f"leak {API_KEY}"}))]), text(f"key {API_KEY}")])
    agent.run_turn(f"my key is {API_KEY}")
    for path in agent.session.path.parent.parent.rglob("*"):
        if path.is_file():
            assert API_KEY not in path.read_text(encoding="utf-8", errors="replace"), path


def test_request_that_cannot_fit_ends_the_turn_with_error_not_a_crash(make_agent) -> None:
    from ctxagent.context.assembler import ContextAssembler

    agent, server, events = make_agent([text("fits")], model_opts={"context_window": 300, "max_output_tokens": 100},
                                       assembler=lambda s: ContextAssembler(s.model, snapshots=False, load_state=None))
    end = agent.run_turn("x " * 2000)
    assert end.reason == "error" and server.requests == []
    assert [e.kind for e in events if e.type == "error"] == ["ContextOverflowError"]
    assert "cannot fit" in end.message and pairing_errors(agent.session.history) == []


def test_real_context_assembler_drives_the_loop(make_agent) -> None:
    from ctxagent.context.assembler import ContextAssembler

    agent, server, _ = make_agent([tool_calls([("echo", '{"text": "hi"}')]), text("done")],
                                  assembler=lambda s: ContextAssembler(s.model, snapshots=False, load_state=None))
    assert agent.run_turn("say hi").answer == "done"
    assert pairing_errors(server.requests[-1]["messages"]) == []


def test_C06_reasoning_streams_apart_and_is_kept_on_the_message(make_agent) -> None:
    agent, _, events = make_agent([text("the answer", reasoning="thinking hard")])
    end = agent.run_turn("x")
    assert end.answer == "the answer"
    assert "".join(e.text for e in events if e.type == "reasoning_delta") == "thinking hard"
    assert "thinking" not in "".join(e.text for e in events if e.type == "text_delta")
    assert agent.session.history[-1]["reasoning_content"] == "thinking hard"


def test_C07_tool_calls_with_empty_string_content_still_run(make_agent) -> None:
    echo = EchoTool()
    agent, server, _ = make_agent([tool_calls([("echo", '{"text": "a"}')], empty_content=""), text("ok")], tools=[echo])
    assert agent.run_turn("x").answer == "ok" and echo.calls == [{"text": "a"}]
    assert server.requests[1]["messages"][2]["tool_calls"][0]["function"]["name"] == "echo"
