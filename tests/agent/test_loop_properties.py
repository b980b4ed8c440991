"""Property (C02): whatever the model does (calls, bad arguments, unknown tools, crashes, Ctrl-C,
server errors), every request sent and the history kept have valid call/result pairing."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxagent.agent.approval import ApprovalPolicy
from ctxagent.agent.loop import Agent
from ctxagent.agent.session import Session
from ctxagent.config.settings import Settings
from ctxagent.context.messages import pairing_errors
from ctxagent.llm.client import LLMClient
from ctxagent.llm.settings import ModelSettings
from ctxagent.tools.base import ToolRegistry
from ctxagent.validation import Secret
from tests.agent.conftest import ChangeTool, CrashTool, CtrlCTool, EchoTool
from tests.support.fake_openai import FakeOpenAI, error, text, tool_calls

call = st.sampled_from([("echo", '{"text": "x"}'), ("echo", "[1]"), ("echo", '{"a":1}{"b":2}'), ("slow", "{}"),
                        ("crash", "{}"), ("nosuch", "{}"), ("change", '{"path": "a"}'), ("change", '{"path": "bad"}')])
step = st.one_of(
    st.builds(lambda calls: tool_calls(calls), st.lists(call, min_size=1, max_size=3)),
    st.just(text("answer")),
    st.sampled_from([error(500), error(400), error(429, headers={"Retry-After": "0"})]),
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=st.lists(step, max_size=8), answers=st.lists(st.sampled_from(["y", "n no", "a"]), max_size=4))
def test_pairing_is_valid_after_any_script(script: list[dict], answers: list[str]) -> None:
    replies = iter(answers)
    with FakeOpenAI(script) as server, tempfile.TemporaryDirectory() as tmp:
        model = ModelSettings(provider="custom", model="m", base_url=server.base_url, api_key=Secret("k" * 20),
                              max_retries=0)
        registry = ToolRegistry()
        for tool in (EchoTool(), ChangeTool(), CrashTool(), CtrlCTool()):
            registry.register(tool)
        agent = Agent(client=LLMClient(model, sleep=lambda s: None), registry=registry,
                      session=Session.create(Path(tmp)), settings=Settings(model=model), system="s",
                      approval=ApprovalPolicy(ask=lambda q: next(replies, None)))
        for turn in range(3):
            end = agent.run_turn(f"turn {turn}")
            assert end.reason in ("finished", "interrupted", "error")
            assert pairing_errors(agent.session.history) == []
        for request in server.requests:
            assert pairing_errors(request["messages"]) == [], json.dumps(request["messages"])[:2000]
        resumed = Session.resume(Path(tmp), agent.session.id)
        assert pairing_errors(resumed.history) == []
