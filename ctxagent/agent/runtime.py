"""Wire an `Agent` for a repository: model client (starting the offline model if needed),
session (new or resumed), tools, system prompt (with the harness's layer: profile files,
AGENTS.md chain, skills; `ctxagent.agent.rules`), assembler, approval, and the episodic
memory written when each turn ends (`[agent] episodic_memory`).

`open_agent` is what `ctxagent run` and `ctxagent chat` share; it is a context manager
because the offline local model runs as a server for the agent's lifetime.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ctxagent.agent.approval import ApprovalPolicy
from ctxagent.agent.carryover import carry_over, cutoff_of, notice_text, session_started
from ctxagent.agent.episodic import EpisodeRecorder
from ctxagent.agent.events import Notice, Sink, TurnEnd
from ctxagent.agent.hooks import session_hooks
from ctxagent.agent.loop import Agent
from ctxagent.agent.prompts import system_prompt
from ctxagent.agent.retention import retention_notice
from ctxagent.agent.rules import NestedRules, open_layer
from ctxagent.agent.session import Session
from ctxagent.agent.subagents import AskRelay, Subagents
from ctxagent.agent.toolset import build_registry, open_mcp
from ctxagent.agent.wiring import SideCalls, make_assembler, make_recorder, turn_follower
from ctxagent.config.settings import LOCAL_PROVIDER, Settings, user_config_path
from ctxagent.context.record.recorder import SnapshotRecorder
from ctxagent.context.request import ContextAssembler
from ctxagent.harness.agents import discover_agents
from ctxagent.llm.client import LLMClient
from ctxagent.llm.meter import MeteredClient, UsageMeter
from ctxagent.tools.mcp_tool import McpFollower, add_mcp_tools

#: `(settings, repo, session, client, *, recorder, memory) -> assembler or None`; None means the
#: loop's PassthroughAssembler. `recorder`: the session's SnapshotRecorder, `memory`: the memory tool.
AssemblerFactory = Callable[..., ContextAssembler | None]


@contextlib.contextmanager
def open_agent(repo: Path, settings: Settings, *, resume: str | None = None, sinks: Sequence[Sink] = (),
               ask: Callable[[str], str | None] | None = None,
               assembler_factory: AssemblerFactory | None = None,
               notice: Callable[[str], None] | None = None, fresh: bool = False,
               cwd: Path | None = None) -> Iterator[Agent]:
    """Yield a ready Agent for `repo`; the model server (local provider) stops on exit. `resume`:
    a session id or "last" (NotFoundError if absent); `ask`: the approval prompt (None: refuse
    unless auto_approve); `assembler_factory`: default `default_assembler`; `notice`: one-off
    messages (what is carried over is one); `fresh`: no earlier todo items and notes injected;
    `cwd`: the user's working directory (the AGENTS.md chain runs down to it). Raises ConfigError / LLMError."""
    repo = Path(repo).resolve()
    with contextlib.ExitStack() as stack:
        client = stack.enter_context(_model_client(settings, notice))
        model = client.settings
        settings = settings.replace(model=model)
        meta = {"provider": model.provider, "model": model.model}
        session = (Session.resume(repo, resume, secrets=settings.secrets(), meta=meta) if resume
                   else Session.create(repo, secrets=settings.secrets(), meta=meta))
        if not resume:
            _say(notice, retention_notice(repo, settings.state, exclude=session.id))  # `[state]` retention
        _say(notice, _carry_over(repo, session, settings, fresh))
        side_usage = UsageMeter()  # the plan tool's and compaction's own model calls count in the turn's limits
        side_client = MeteredClient(client, side_usage)
        recorder = make_recorder(settings, repo, session, client=side_client)
        side_calls = SideCalls(recorder)  # each model call a tool makes gets a snapshot of its own
        registry = build_registry(repo, settings, session_id=session.id, client=side_calls.client(side_client),
                                  only=settings.agent.tool_names(model.provider))  # `[agent] tools`
        mcp = stack.enter_context(open_mcp(repo, settings, ask=ask))  # MCP servers: docs/mcp.md
        memory = registry.get("memory")
        hooks, warned = session_hooks(repo, settings, session)
        assembler = (assembler_factory or default_assembler)(settings, repo, session, side_client,
                                                             recorder=recorder, memory=memory, hooks=hooks)
        stack.callback(recorder.flush)  # the last snapshots' batch is fsynced on the way out
        extra: list[Sink] = [side_calls.on_event, _flush_at_turn_end(recorder)]
        follower = turn_follower(registry)  # commands and python_exec checkpoint with the running turn's number
        if follower is not None:
            extra.append(follower)
        if settings.agent.episodic_memory and memory is not None and getattr(memory, "available", True):
            extra.append(EpisodeRecorder(memory, session.id, secrets=session.secrets, repo=repo))  # one episodic memory per turn
        layer = open_layer(repo, settings, cwd)  # profile files, AGENTS.md chain, skill catalog
        relay = AskRelay(ask)  # sub-agents ask the user through the main thread
        auto, allow_exec = settings.agent.auto_approve, settings.agent.approval == "never"
        wanted = settings.agent.tool_names(model.provider)
        children = None
        if wanted is None or "delegate" in wanted:
            definitions, skipped = discover_agents(repo, user_config_path().parent)
            children = Subagents(repo=repo, settings=settings, client=side_client, session=session,
                                 tools=[*registry.names(), "delegate"], layer=layer, definitions=definitions,
                                 relay=relay, sinks=sinks, hooks=hooks, auto_approve=auto,
                                 allow_exec=allow_exec, mcp=mcp)  # children get MCP tools of their own
            warned += skipped + children.warnings()
            registry.register(children.tool())
        add_mcp_tools(registry, mcp, settings.mcp, auto_approve=auto)
        agent = Agent(client=client, registry=registry, session=session, settings=settings,
                      system=system_prompt(repo, registry.names(), layer), assembler=assembler,
                      approval=ApprovalPolicy(auto_approve=auto, ask=relay if ask is not None else None,
                                              allow_exec=allow_exec),
                      sinks=[*sinks, *extra], side_usage=side_usage, layer=layer, hooks=hooks, serve=relay.serve)
        if children is not None:
            children.bind(agent)  # a child never has more than the turn that delegates (a command's allowed-tools)
        agent.sinks.append(NestedRules(agent, layer, settings).on_event)  # nested AGENTS.md, on first read (it re-renders agent.system)
        for text in warned:
            agent.emit(Notice(message=text))
        agent.mcp = McpFollower(mcp, registry, lambda text: agent.emit(Notice(message=text)))  # /mcp reads it
        agent.sinks.append(agent.mcp.on_event)
        agent.mcp.flush()
        agent.start_session("resume" if resume else "startup")
        try:
            yield agent
        finally:
            agent.end_session("exit")


def _carry_over(repo: Path, session: Session, settings: Settings, fresh: bool) -> str | None:
    """Set the session's carry-over cutoff; the line saying what it carries (None: nothing)."""
    age = settings.state.carry_over_max_age_days
    started = session_started(session.path)
    session.carry_cutoff = cutoff_of(started, age, fresh)
    try:
        found = carry_over(repo, started, max_age_days=age, fresh=fresh)
    except Exception:  # an unreadable board or note is reported by the request's own state problems
        return None
    return notice_text(found, max_age_days=age, fresh=fresh)


def _say(notice: Callable[[str], None] | None, text: str | None) -> None:
    if notice is not None and text:
        notice(text)


def _flush_at_turn_end(recorder: SnapshotRecorder) -> Sink:
    """A sink fsyncing the turn's snapshots when it ends (they are with the OS already)."""
    def on_event(event: Any) -> None:
        if isinstance(event, TurnEnd):
            recorder.flush()

    return on_event


@contextlib.contextmanager
def _model_client(settings: Settings, notice: Callable[[str], None] | None) -> Iterator[LLMClient]:
    """The model client, closed on exit. For the `local` provider, start the offline model
    first; its client (`LocalServerClient`) reports a failed request with the server's log,
    read before the server stops and deletes it (breaker F15)."""
    if settings.model.provider != LOCAL_PROVIDER:
        with LLMClient(settings.model) as client:
            yield client
        return
    from ctxagent.llm.local.bundle import LocalServer, startup_notice
    from ctxagent.llm.local.client import LocalServerClient

    with LocalServer() as server:
        if notice is not None:
            notice(startup_notice(server.model))
        with LocalServerClient(server) as client:
            yield client


def default_assembler(settings: Settings, repo: Path, session: Session, client: LLMClient, *,
                      recorder: SnapshotRecorder | None = None, memory: Any = None,
                      hooks: Any = None) -> ContextAssembler | None:
    """The context engine's assembler (`ctxagent.agent.wiring.make_assembler`): budgets,
    compaction with model summaries through `client`, snapshots through `recorder`, the
    memory layer from the `memory` tool, PreCompact `hooks`."""
    return make_assembler(settings, repo, session, client=client, recorder=recorder, memory=memory, hooks=hooks)
