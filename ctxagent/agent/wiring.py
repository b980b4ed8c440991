"""Wire the context engine into an agent: the assembler factory and `attach`.

`make_assembler(settings, repo, session, client=..., emit=...)` returns the
`ContextAssembler` for a session: budget from `settings.model`, compaction knobs from
`settings.context`, LLM summaries through `client` (extractive only without one),
snapshots with `client`'s request parameters and `settings.secrets()` scrubbed (a
summary call's usage too, through a `RecordedClient`),
constructed once with all it needs (no callback set afterwards). What happens while a
request is built (an automatic compaction, its compacted view, notices) comes back in the
`AssembledRequest`, and the loop emits it (`Agent._emit_built`); a resumed session's last
view (`Session.compaction_view`) is rebuilt at the first call, with a notice when it cannot be.

`attach(agent)` connects an assembler to the agent built around it: the agent's `memory` tool
feeds the memory layer with the memories of other sessions (the session's own are in its
history), and each model call of the `plan` tool gets a snapshot of its own
(`ContextAssembler.record_side_call`, naming the main call and tool call it was made
for). The notes and the todo board come from the repository on every request
(`ctxagent.context.state.read`); `ctxagent.context.state.select` sends the board as the
state layer and the notes and memory hits chosen for the request as evidence, in front
of the current request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ctxagent.agent.compaction import compaction_event  # noqa: F401  (re-exported: its old home)
from ctxagent.agent.events import ToolCallEvent, TurnStart
from ctxagent.context.assembler import ContextAssembler, request_params_of
from ctxagent.context.compaction.model_summary import llm_summarizer
from ctxagent.llm.meter import RecordedClient

#: Memory hits put in each request, and the least importance they need; the same defaults
#: as the builder's gather stage (`ctxagent.context.gather`: textbook 9.3.3's min_importance).
MEMORY_HITS = 5
MEMORY_MIN_IMPORTANCE = 0.3


def memory_search(tool: Any, *, limit: int = MEMORY_HITS, min_importance: float = MEMORY_MIN_IMPORTANCE,
                  session_id: str | None = None) -> Callable[[str], list]:
    """`query -> [hit dicts]` over a MemoryTool (anything with the textbook's
    `run({"action": "search", ...})`), for `ContextAssembler(memory_search=...)`.

    `session_id`: the session the requests are for. Its own memories (its episodes, and
    whatever the memory tool recorded with its id) are left out of the search, so they do
    not take the places of earlier sessions' memories; the assembler drops any that still
    come back (see `ContextAssembler._gather`)."""
    args = {"action": "search", "limit": limit, "min_importance": min_importance}
    if session_id:
        args["exclude_session_id"] = session_id

    def search(query: str) -> list:
        return list(tool.run({**args, "query": query}) or [])

    return search


def attach(agent: Any) -> None:
    """Connect `agent.assembler` (a ContextAssembler; anything else is left alone) to `agent`:
    the agent's `memory` tool, if it has one, feeds the memory layer of every request with
    memories of other sessions (this session's own are in its history already); the
    `plan` tool's model calls are written as snapshots of their own (`SideCalls`)."""
    assembler = agent.assembler
    if not isinstance(assembler, ContextAssembler):
        return
    tool = agent.registry.get("memory")
    if tool is not None and assembler.memory_search is None:
        assembler.memory_search = memory_search(tool, session_id=agent.session.id)
    plan = agent.registry.get("plan")
    if plan is not None and getattr(plan, "client", None) is not None and not isinstance(plan.client, RecordedClient):
        calls = SideCalls(assembler, "plan")
        agent.sinks.append(calls.on_event)
        plan.client = RecordedClient(plan.client, calls.record)


def follow_turns(agent: Any) -> None:
    """Keep the turn number of every tool that checkpoints its runs (`tool.executor.turn`
    or `tool.checkpoints.turn`, recorded with each checkpoint) current, with a sink on TurnStart."""
    executors = [follower for tool in agent.registry for follower in
                 (getattr(tool, "executor", None), getattr(tool, "checkpoints", None)) if follower is not None]
    if not executors:
        return

    def on_event(event: Any) -> None:
        if isinstance(event, TurnStart):
            for executor in executors:
                executor.turn = event.turn

    agent.sinks.append(on_event)


class SideCalls:
    """Records the model calls one tool (`kind`) makes as snapshots through `assembler`:
    `on_event` (an agent sink) follows which tool call is running, `record` (a
    `RecordedClient` recorder) writes each call with that tool call's id and the attempt
    number within it (the plan tool retries once on an invalid plan)."""

    def __init__(self, assembler: ContextAssembler, kind: str) -> None:
        self.assembler, self.kind = assembler, kind
        self.tool_call_id: str | None = None
        self.attempts = 0

    def on_event(self, event: Any) -> None:
        if isinstance(event, ToolCallEvent):
            self.tool_call_id = event.call_id if event.name == self.kind else None
            self.attempts = 0

    def record(self, messages: list, tools: list | None, response: Any, error: Exception | None) -> None:
        self.attempts += 1
        usage = getattr(response, "usage", None)
        self.assembler.record_side_call(
            self.kind, messages, tools, usage=usage.to_dict() if hasattr(usage, "to_dict") else None,
            error=f"{type(error).__name__}: {error}" if error is not None else None,
            made_for={"tool": self.kind, "tool_call_id": self.tool_call_id, "attempt": self.attempts})


def make_assembler(settings: Any, repo: Path, session: Any, *, client: Any = None,
                   emit: Callable[[Any], None] | None = None) -> ContextAssembler:
    """The context engine's assembler for `session` (see the module doc).

    Raises ConfigError when a `[context]` compaction or selection setting is out of range.
    """
    assembler = ContextAssembler(settings.model, context=settings.context, secrets=settings.secrets(),
                                 request_params=request_params_of(client) if client is not None else None)
    if client is not None:  # the summary calls' usage goes in their snapshots
        assembler.summarize = llm_summarizer(RecordedClient(client, assembler.summary_reply))
    if getattr(session, "id", None):  # a /compact before this process's first call still has a snapshot
        assembler.session_state = {"session_id": session.id, "repo": str(repo)}
    assembler.resume_from(getattr(session, "compaction_view", None))
    return assembler
