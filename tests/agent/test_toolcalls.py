"""`ToolRunner` through the real loop: a tool that keeps what it is given (`writes_state`) gets its
arguments with the session's secrets redacted; any other tool gets them exactly (F7)."""

from __future__ import annotations

import json
from typing import Any

from ctxagent.agent.toolcalls import redacted_arguments
from ctxagent.redaction import REDACTED
from tests.agent.conftest import API_KEY, EchoParams, EchoTool
from tests.support.fake_openai import text, tool_calls


class KeepTool(EchoTool):
    """Stands for note/todo/memory/rag/plan: stores its text."""

    name = "keep"
    description = "Keep the text."
    Params = EchoParams
    writes_state = True


def test_state_writing_tools_get_arguments_with_secrets_redacted(make_agent) -> None:
    keep, echo = KeepTool(), EchoTool()
    args = json.dumps({"text": f"key {API_KEY} and sk-proj-ABCDEFGHIJKLMNOPqrstuv"})
    agent, _server, _events = make_agent([tool_calls([("keep", args), ("echo", args)]), text("ok")],
                                         tools=[keep, echo])
    agent.run_turn("store it")
    assert keep.calls == [{"text": f"key {REDACTED} and {REDACTED}"}]
    assert echo.calls == [json.loads(args)]  # a command or a patch stays exactly what was asked


def test_redacted_arguments_covers_nested_values_and_credential_keys() -> None:
    args: dict[str, Any] = {"action": "add", "content": [f"x{API_KEY}y", {"deep": API_KEY}], "api_key": "anything",
                            "importance": 0.5}
    out = redacted_arguments(KeepTool(), args, [API_KEY])
    assert out == {"action": "add", "content": [f"x{REDACTED}y", {"deep": REDACTED}], "api_key": REDACTED,
                   "importance": 0.5}
    assert args["api_key"] == "anything"  # a copy: the call as the model sent it is left alone
    assert redacted_arguments(EchoTool(), args, [API_KEY]) is args


def test_every_agent_tool_that_stores_text_declares_it(tmp_path) -> None:
    from ctxagent.agent.toolset import build_registry
    from ctxagent.config.settings import Settings
    from ctxagent.llm.settings import ModelSettings
    from ctxagent.validation import Secret

    settings = Settings(model=ModelSettings(provider="custom", model="m", base_url="http://127.0.0.1:9/v1",
                                            api_key=Secret("sk-test")))
    registry = build_registry(tmp_path, settings)
    stores = {tool.name for tool in registry if getattr(tool, "writes_state", False)}
    assert stores == {"note", "todo", "plan", "memory", "rag", "memory_file"}


def test_the_configured_api_key_never_reaches_the_model_in_a_tool_result(make_agent) -> None:
    # trial: an approved unsandboxed command read ctxagent's own /proc/PPID/environ and printed the key
    echo = EchoTool()
    plain = "sk-proj-ABCDEFGHIJKLMNOPqrstuv"  # key-shaped text of the user's files stays readable
    args = json.dumps({"text": f"OPENAI_API_KEY={API_KEY} fixture={plain}"})
    agent, server, _events = make_agent([tool_calls([("echo", args)]), text("ok")], tools=[echo])
    agent.run_turn("print the environment")
    result = next(m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool")
    assert API_KEY not in result and f"OPENAI_API_KEY={REDACTED}" in result
    assert plain in result
