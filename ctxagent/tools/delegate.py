"""`delegate`: hand a sub-task to a sub-agent with a clean context window; its condensed
report (at most about 2,000 tokens) is the result. Calls in one reply run concurrently
(`concurrent`); the running of children is the agent's (`ctxagent.agent.subagents`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Callable, Mapping

from msgspec import Meta

from ctxagent.harness.agents import AgentDefinition
from ctxagent.tools.base import Tool, ToolParams, ToolResult

#: `spawn(definition, task, context) -> (ok, report)`: runs one child to its end (thread-safe).
Spawn = Callable[[AgentDefinition, str, str], "tuple[bool, str]"]


class DelegateParams(ToolParams):
    """Arguments of the `delegate` tool."""

    agent: Annotated[str, Meta(description="the sub-agent to use (one of the names listed in this tool's "
                                           "description)")]
    task: Annotated[str, Meta(min_length=1, description="what the sub-agent must do or find, complete in itself")]
    context: Annotated[str, Meta(description="what you already know that it needs (paths, names, decisions), "
                                             "if any")] = ""


class DelegateTool(Tool):
    """Runs sub-agents through `spawn` (see `Spawn`); `definitions` by name; `interrupt()` stops
    every child under way (Ctrl-C). Without `spawn` (library use) it is not offered."""

    name = "delegate"
    description = ("Delegate a self-contained sub-task to a sub-agent that works in its own clean context "
                   "window and returns a condensed report (findings with file paths and line numbers). "
                   "Use it for searches or reading that would take many steps; several delegate calls in "
                   "one reply run at the same time.")
    Params = DelegateParams
    #: The loop may run several calls of this tool from one reply at once.
    concurrent = True

    def __init__(self, definitions: Mapping[str, AgentDefinition], spawn: Spawn | None = None,
                 interrupt: Callable[[], None] | None = None) -> None:
        self.definitions = dict(definitions)
        self.spawn = spawn
        self._interrupt = interrupt

    @classmethod
    def for_repo(cls, repo: str | Path, settings: Any = None, *, session_id: str | None = None,
                 client: Any = None) -> DelegateTool:
        """A delegate tool with no way to run children: not offered (the agent builds its own)."""
        return cls({})

    @property
    def offered(self) -> bool:
        """True when children can be run and at least one definition exists."""
        return self.spawn is not None and bool(self.definitions)

    def schema(self) -> dict[str, Any]:
        """The OpenAI tools entry, with the sub-agents listed in the description and as an enum."""
        entry = super().schema()
        listing = "\n".join(f"- {d.name}: {d.description}" for d in self.definitions.values())
        entry["function"]["description"] = f"{self.description}\nSub-agents:\n{listing}"
        entry["function"]["parameters"]["properties"]["agent"]["enum"] = list(self.definitions)
        return entry

    def interrupt(self) -> None:
        """Stop every child under way (each ends as interrupted and reports what it has)."""
        if self._interrupt is not None:
            self._interrupt()

    def _run(self, params: DelegateParams) -> ToolResult:  # type: ignore[override]
        definition = self.definitions.get(params.agent)
        if definition is None:
            return ToolResult(False, f"delegate: there is no sub-agent {params.agent!r}; use one of "
                                     f"{', '.join(self.definitions)}")
        if self.spawn is None:
            return ToolResult(False, "delegate: sub-agents run only inside an agent session")
        ok, report = self.spawn(definition, params.task, params.context)
        return ToolResult(ok, report, data={"agent": definition.name, "report": report})
