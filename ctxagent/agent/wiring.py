"""Wire the context engine into an agent: `make_recorder`, `make_assembler`, `SideCalls`.

Every dependency is a constructor argument: the recorder is made first, so the tools'
model client records into it and the assembler writes through it; nothing is set on an
assembler, a tool or an agent after construction. Reference: docs/architecture.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ctxagent.agent.carryover import state_loader
from ctxagent.agent.compaction import compaction_event  # noqa: F401  (re-exported: its old home)
from ctxagent.agent.events import ToolCallEvent, TurnStart
from ctxagent.context.assembler import ContextAssembler, request_params_of
from ctxagent.context.compaction.model_summary import llm_summarizer
from ctxagent.context.record.recorder import SnapshotRecorder
from ctxagent.context.state.read import gather_state
from ctxagent.llm.meter import RecordedClient

#: Memory hits put in each request, and the least importance they need; the same defaults
#: as the builder's gather stage (`ctxagent.context.gather`: textbook 9.3.3's min_importance).
MEMORY_HITS = 5
MEMORY_MIN_IMPORTANCE = 0.3


def memory_search(tool: Any, *, limit: int = MEMORY_HITS, min_importance: float = MEMORY_MIN_IMPORTANCE,
                  session_id: str | None = None) -> Callable[[str], list]:
    """`query -> [hit dicts]` over a MemoryTool (the textbook's `run({"action": "search"})`), for
    `ContextAssembler(memory_search=...)`. `session_id`: its own memories are left out of the
    search, so they take no place of earlier sessions' ones (the assembler drops any left).
    Stale memories (their files changed since: `ctxagent.memory.stale`) are left out."""
    args = {"action": "search", "limit": limit, "min_importance": min_importance, "exclude_stale": True}
    if session_id:
        args["exclude_session_id"] = session_id

    def search(query: str) -> list:
        return list(tool.run({**args, "query": query}) or [])

    return search


def turn_follower(registry: Any) -> Callable[[Any], None] | None:
    """A sink that keeps the turn number of every tool that checkpoints its runs
    (`tool.executor.turn` or `tool.checkpoints.turn`, recorded with each checkpoint) current
    on TurnStart; None when no tool checkpoints."""
    followers = [follower for tool in registry for follower in
                 (getattr(tool, "executor", None), getattr(tool, "checkpoints", None)) if follower is not None]
    if not followers:
        return None

    def on_event(event: Any) -> None:
        if isinstance(event, TurnStart):
            for follower in followers:
                follower.turn = event.turn

    return on_event


class SideCalls:
    """Snapshots of the model calls tools make, through `recorder`: `on_event` (an agent
    sink) follows which tool call runs, `record` (a `RecordedClient` recorder) writes each
    call as kind <tool name>, with the tool call's id and the attempt number within it."""

    def __init__(self, recorder: SnapshotRecorder) -> None:
        self.recorder = recorder
        self.tool: str | None = None
        self.tool_call_id: str | None = None
        self.attempts = 0

    def on_event(self, event: Any) -> None:
        if isinstance(event, ToolCallEvent):
            self.tool, self.tool_call_id = event.name, event.call_id
            self.attempts = 0

    def record(self, messages: list, tools: list | None, response: Any, error: Exception | None) -> None:
        self.attempts += 1
        usage = getattr(response, "usage", None)
        kind = self.tool or "tool"
        self.recorder.record_side_call(
            kind, messages, tools, usage=usage.to_dict() if hasattr(usage, "to_dict") else None,
            error=f"{type(error).__name__}: {error}" if error is not None else None,
            made_for={"tool": kind, "tool_call_id": self.tool_call_id, "attempt": self.attempts})

    def client(self, client: Any) -> Any:
        """`client`, its calls recorded here (None stays None: a tool without a model)."""
        return RecordedClient(client, self.record) if client is not None else None


def make_recorder(settings: Any, repo: Path, session: Any, *, client: Any = None) -> SnapshotRecorder:
    """The snapshot recorder of `session` in `repo`: `client`'s request parameters recorded,
    `settings.secrets()` scrubbed; a `/compact` before the first call still writes there."""
    where = {"session_id": session.id, "repo": str(repo)} if getattr(session, "id", None) else None
    return SnapshotRecorder(settings.model.model, secrets=settings.secrets(), session=where,
                            request_params=request_params_of(client) if client is not None else None)


def make_assembler(settings: Any, repo: Path, session: Any, *, client: Any = None,
                   recorder: SnapshotRecorder | None = None, memory: Any = None,
                   hooks: Any = None) -> ContextAssembler:
    """The context engine's assembler for `session`: summaries through `client` (extractive
    without one), snapshots through `recorder` (default: `make_recorder`), the memory layer
    from `memory` (a MemoryTool, other sessions' memories only), the resumed view rebuilt,
    the todo items and notes older than `session.carry_cutoff` left out, `hooks`' PreCompact
    rules run before an automatic compaction. Raises ConfigError when a `[context]` compaction or selection setting is out of range."""
    recorder = recorder or make_recorder(settings, repo, session, client=client)
    summarize = llm_summarizer(RecordedClient(client, recorder.summary_reply)) if client is not None else None
    search = memory_search(memory, session_id=getattr(session, "id", None)) if memory is not None else None
    cutoff = getattr(session, "carry_cutoff", None)
    return ContextAssembler(settings.model, context=settings.context, secrets=settings.secrets(), summarize=summarize,
                            recorder=recorder, memory_search=search,
                            load_state=state_loader(cutoff) if cutoff is not None else gather_state,
                            resume=getattr(session, "compaction_view", None),
                            before_compaction=(lambda: _pre_compact(hooks)) if hooks is not None else None)


def _pre_compact(hooks: Any) -> tuple[str | None, bool]:
    """The assembler's `before_compaction`: PreCompact ("auto") as (what to tell the user, blocked)."""
    verdict = hooks.pre_compact("auto")
    return "; ".join(verdict.notices) or None, verdict.blocked is not None
