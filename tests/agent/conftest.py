"""Fixtures for loop tests: a real Agent + real LLMClient against the in-process fake server.

The tools here are small real `Tool` subclasses made for the tests (the model is the only
thing faked); they record their calls so tests can assert what ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from ctxagent.agent.approval import ApprovalPolicy
from ctxagent.agent.events import Event
from ctxagent.agent.loop import Agent
from ctxagent.agent.session import Session
from ctxagent.config.settings import AgentSettings, Settings
from ctxagent.errors import ToolInputError
from ctxagent.llm.client import LLMClient
from ctxagent.llm.settings import ModelSettings
from ctxagent.tools.base import Tool, ToolParams, ToolRegistry, ToolResult
from ctxagent.validation import Secret

API_KEY = "sk-test-SECRET-abcdef0123456789"


class EchoParams(ToolParams):
    text: str = ""


class EchoTool(Tool):
    name = "echo"
    description = "Echo the text back."
    Params = EchoParams

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def _run(self, params: EchoParams) -> ToolResult:
        self.calls.append(params.to_dict())
        return ToolResult(ok=True, content=f"echo: {params.text}", data=params.text)


class ChangeParams(ToolParams):
    path: str


class ChangeTool(Tool):
    """Needs approval; `preview` rejects path "bad" like apply_patch rejects a broken patch."""

    name = "change"
    description = "Pretend to change a file."
    Params = ChangeParams
    needs_approval = True

    def __init__(self) -> None:
        self.calls: list[str] = []

    def preview(self, args: dict[str, Any]) -> str:
        params = self.parse(args)
        if params.path == "bad":
            raise ToolInputError("bad is not a file you may change")
        return f"--- a/{params.path}\n+++ b/{params.path}\n@@\n-old\n+new\n"

    def _run(self, params: ChangeParams) -> ToolResult:
        self.calls.append(params.path)
        return ToolResult(ok=True, content=f"changed {params.path}")


class CrashTool(Tool):
    """A buggy tool whose execute() raises despite the contract."""

    name = "crash"
    description = "Always crashes."
    Params = EchoParams

    def execute(self, args: dict[str, Any] | None) -> ToolResult:
        raise RuntimeError("boom")


class CtrlCTool(Tool):
    """Simulates the user pressing Ctrl-C while the tool runs."""

    name = "slow"
    description = "Gets interrupted."
    Params = EchoParams

    def _run(self, params: EchoParams) -> ToolResult:
        raise KeyboardInterrupt


@pytest.fixture
def make_agent(tmp_path: Path, fake_openai: Callable) -> Callable[..., tuple[Agent, Any, list[Event]]]:
    """Factory `(script, *, approval=None, tools=None, model_opts=None, assembler=None, sinks=(),
    **agent_limits) -> (agent, server, events)`; `assembler(settings)` makes the agent's assembler."""

    def build(script: list[dict[str, Any]], *, approval: ApprovalPolicy | None = None,
              tools: list[Tool] | None = None, model_opts: dict[str, Any] | None = None,
              assembler: Callable[[Settings], Any] | None = None, sinks: tuple = (),
              **limits: Any) -> tuple[Agent, Any, list[Event]]:
        server = fake_openai(script)
        model = ModelSettings(provider="custom", model="fake-model", base_url=server.base_url,
                              api_key=Secret(API_KEY), max_retries=2, timeout_s=10, **(model_opts or {}))
        settings = Settings(model=model, agent=AgentSettings(**limits))
        registry = ToolRegistry()
        for tool in tools if tools is not None else [EchoTool(), ChangeTool(), CrashTool(), CtrlCTool()]:
            registry.register(tool)
        session = Session.create(tmp_path, secrets=settings.secrets())
        events: list[Event] = []
        agent = Agent(client=LLMClient(model, sleep=lambda s: None), registry=registry, session=session,
                      settings=settings, system="You are a test agent.", approval=approval,
                      assembler=assembler(settings) if assembler is not None else None, sinks=[events.append, *sinks])
        return agent, server, events

    return build
