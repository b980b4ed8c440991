"""Sub-agents: a `delegate` call runs a child `Agent` with a clean context window (its system
prompt, the project's rules, the task), a restricted tool set and its own step and token
budget; its condensed report is the parent's tool result. A child never has a tool its parent's
turn lacks (a custom command's allowed-tools hold for it too). Children's tokens count in the
parent's limits; their transcripts sit beside the parent's. They get the session's MCP tools
(the same connections and approval rules) and fire its hooks, each payload naming the child."""

from __future__ import annotations

import itertools
import queue
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ctxagent.agent.approval import ApprovalPolicy
from ctxagent.agent.events import ApprovalRequest, ErrorEvent, Event, Notice, Sink, ToolCallEvent, TurnEnd, send
from ctxagent.agent.loop import Agent
from ctxagent.agent.prompts import render, system_prompt
from ctxagent.agent.session import Session
from ctxagent.agent.toolset import build_registry
from ctxagent.agent.wiring import make_assembler, make_recorder
from ctxagent.config.settings import Settings
from ctxagent.harness.agents import READ_ONLY_TOOLS, AgentDefinition
from ctxagent.harness.hooks import NO_HOOKS, Hooks
from ctxagent.llm.meter import MeteredClient, UsageMeter
from ctxagent.mcp.names import covers, is_mcp_name, tool_name
from ctxagent.text.tokens import estimate_tokens
from ctxagent.tools import TOOLS
from ctxagent.tools.base import ToolRegistry
from ctxagent.tools.delegate import DelegateTool
from ctxagent.tools.limited import LimitedTerminal, TerminalLimit

if TYPE_CHECKING:  # asyncio and the SDK load only with a session's MCP servers
    from ctxagent.mcp.manager import ServerManager, ToolEntry

REPORT_MAX_TOKENS = 2000
"""Tokens of a child's report kept in the parent's context (the textbook's 1,000-2,000)."""
MAX_DEPTH = 2
"""Levels of agents: a parent's children (depth 1) may delegate once more, if their definition lists `delegate`."""
LIMIT_REASONS = frozenset({"max_steps", "max_tokens", "max_cost", "wall_time"})


class AskRelay:
    """The user's `ask` for agents in worker threads: a question from a worker waits until the
    main thread, waiting for its children, answers it (`serve`); asked on the main thread, it asks."""

    def __init__(self, ask: Callable[[str], str | None] | None) -> None:
        self.ask = ask
        self.question_lock = threading.Lock()  # one child's preview and question at a time
        self._pending: queue.Queue[tuple[str, Future]] = queue.Queue()

    def __call__(self, question: str) -> str | None:
        if self.ask is None:
            return None
        if threading.current_thread() is threading.main_thread():
            return self.ask(question)
        slot: Future = Future()
        self._pending.put((question, slot))
        return slot.result()

    def serve(self, timeout: float) -> None:
        """On the main thread: answer one pending question, waiting at most `timeout` seconds
        for one. A KeyboardInterrupt while asking reaches the worker too, then passes on."""
        try:
            question, slot = self._pending.get(timeout=timeout)
        except queue.Empty:
            return
        try:
            slot.set_result(self.ask(question) if self.ask is not None else None)
        except BaseException as exc:
            slot.set_exception(exc)
            raise


class Subagents:
    """Runs the children of one parent agent. `client`: the parent's metered side client (the
    children's usage counts in the parent's turn); `tools`: the parent's tool names; `sinks`:
    where children's progress is shown; `depth`: the parent's level (0 for the main agent); `mcp`:
    the session's servers, `mcp_names`: the MCP tools the parent has (None: every running one).
    `bind(agent)`: the parent, whose registry at each delegation (one turn's, say) bounds the child's."""

    def __init__(self, *, repo: Path, settings: Settings, client: Any, session: Session, tools: Sequence[str],
                 layer: Any, definitions: dict[str, AgentDefinition], relay: AskRelay, sinks: Sequence[Sink] = (),
                 hooks: Hooks = NO_HOOKS, auto_approve: bool = False, allow_exec: bool = False, depth: int = 0,
                 mcp: ServerManager | None = None, mcp_names: Sequence[str] | None = None) -> None:
        self.repo, self.settings, self.client, self.session = Path(repo), settings, client, session
        self.tools, self.layer, self.definitions = list(tools), layer, definitions
        self.relay, self.sinks, self.hooks = relay, list(sinks), hooks
        self.auto_approve, self.allow_exec, self.depth = auto_approve, allow_exec, depth
        self.mcp, self.mcp_names = mcp, None if mcp_names is None else set(mcp_names)
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._emit_lock = threading.Lock()  # children's progress lines, one at a time
        self._running: set[threading.Event] = set()
        self.parent: Any = None

    def bind(self, agent: Any) -> None:
        """Bound children by `agent`'s registry as it is when each starts (a custom command's turn)."""
        self.parent = agent

    def warnings(self) -> list[str]:
        """One line per definition file naming tools or MCP servers that match nothing in this session."""
        servers = {} if self.mcp is None else self.mcp.servers
        entries = [] if self.mcp is None else self.mcp.tools()
        out = []
        for d in self.definitions.values():
            names = [n for n in (*(d.tools or ()), *d.disallowed) if not _known(n, servers, entries)]
            unknown = [n for n in d.mcp_servers or () if n not in servers]
            if names:
                out.append(f"agent definition {d.source}: no tool is named {', '.join(dict.fromkeys(names))}")
            if unknown:
                out.append(f"agent definition {d.source}: `mcpServers` {', '.join(unknown)}: no such server in "
                           "this session (docs/mcp.md); the agent gets no tool of it")
        return out

    def tool(self) -> DelegateTool:
        """The parent's `delegate` tool, running children here."""
        return DelegateTool(self.definitions, spawn=self.spawn, interrupt=self.interrupt)

    def interrupt(self) -> None:
        """Stop every child under way (Ctrl-C): each ends as interrupted."""
        with self._lock:
            for cancel in self._running:
                cancel.set()

    def spawn(self, definition: AgentDefinition, task: str, context: str) -> tuple[bool, str]:
        """Run one child for `task` to its end: (ok, its report, headed by what happened). Never
        raises but KeyboardInterrupt; a child that fails reports its error (ok False)."""
        with self._lock:
            child_id = f"{self.session.id}.{definition.name}-{next(self._numbers)}"
        cancel = threading.Event()
        with self._lock:
            self._running.add(cancel)
        try:
            child = self._child(definition, child_id)
            message = task if not context.strip() else f"{task}\n\nWhat the delegating agent already knows:\n{context}"
            end = child.run_turn(message, cancel=cancel)
            ok, report = self._report(child, end)
        except Exception as exc:  # a child that cannot even start must not end the parent's turn
            ok, end, report = False, None, f"the sub-agent could not run: {type(exc).__name__}: {exc}"
        finally:
            with self._lock:
                self._running.discard(cancel)
        return ok, _headed(child_id, end, report)

    def _child(self, definition: AgentDefinition, child_id: str) -> Agent:
        """A child Agent: its session beside the parent's, its settings, tools, assembler and system prompt."""
        settings = self._child_settings(definition)
        session = Session.child(self.session, child_id)
        meter = UsageMeter()  # the child's own side calls (summaries), in its limits and, through self.client, the parent's
        side = MeteredClient(self.client, meter)
        names = self._child_tools(definition)
        remote = self._child_mcp(definition)
        registry = build_registry(self.repo, settings, session_id=child_id, client=side,
                                  only=[n for n in names if n != "delegate"])
        self._restrict(definition, registry)
        grandchildren = None
        if "delegate" in names:
            grandchildren = Subagents(repo=self.repo, settings=self.settings, client=self.client, session=session,
                                      tools=registry.names(), layer=self.layer, definitions=self.definitions,
                                      relay=self.relay, sinks=self.sinks, hooks=self.hooks,
                                      auto_approve=self.auto_approve, allow_exec=self.allow_exec, depth=self.depth + 1,
                                      mcp=self.mcp, mcp_names=[e.name for e in remote])
            registry.register(grandchildren.tool())
        sinks: list[Sink] = [_Relay(child_id, self.sinks, self._emit_lock)]
        if remote and self.mcp is not None:
            from ctxagent.tools.mcp_tool import McpFollower, add_mcp_tools

            add_mcp_tools(registry, self.mcp, self.settings.mcp, auto_approve=self.auto_approve, entries=remote)
            sinks.append(McpFollower(self.mcp, registry).on_event)  # a crashed server's tools leave the child too
        hooks = self.hooks.for_subagent(child_id, definition.name, str(session.path))
        recorder = make_recorder(settings, self.repo, session, client=side)
        assembler = make_assembler(settings, self.repo, session, client=side, recorder=recorder, hooks=hooks)
        system = render("subagent", base=system_prompt(self.repo, registry.names(), self.layer), name=definition.name,
                        role=definition.prompt, report_tokens=REPORT_MAX_TOKENS)
        approval = ApprovalPolicy(auto_approve=self.auto_approve, ask=self.relay if self.relay.ask else None,
                                  allow_exec=self.allow_exec, question_lock=self.relay.question_lock)
        child = Agent(client=self.client, registry=registry, session=session, settings=settings, system=system,
                      assembler=assembler, approval=approval, sinks=sinks,
                      side_usage=meter, layer=self.layer, hooks=hooks, stop_event="SubagentStop")
        if grandchildren is not None:
            grandchildren.bind(child)
        return child

    def _child_settings(self, definition: AgentDefinition) -> Settings:
        agent = self.settings.agent
        steps = definition.max_steps or agent.subagent_max_steps
        limits = {"max_steps": steps, "max_task_tokens": min(agent.subagent_max_task_tokens, agent.max_task_tokens),
                  "episodic_memory": False}
        update: dict[str, Any] = {"agent": agent.replace(**limits)}
        if definition.model and self.settings.model.provider != "local":
            update["model"] = self.settings.model.replace(model=definition.model)
        return self.settings.replace(**update)

    def _now(self) -> ToolRegistry | None:
        """The parent's registry now (its turn's), None when unbound."""
        return None if self.parent is None else self.parent.registry

    def _child_tools(self, definition: AgentDefinition) -> list[str]:
        """The child's tools: its definition's (or the parent's, without delegate) but its
        `disallowedTools`, that the parent's turn has; `delegate` only when listed and the depth
        allows; in TOOLS order. A read-only definition (`permissionMode: plan`) keeps only READ_ONLY_TOOLS."""
        wanted = definition.tools if definition.tools is not None else [n for n in self.tools if n != "delegate"]
        wanted = [n for n in wanted if n not in definition.disallowed]
        if _read_only(definition):
            wanted = [n for n in wanted if n in READ_ONLY_TOOLS]
        allowed = set(self.tools) | ({"delegate"} if self.depth + 1 < MAX_DEPTH else set())
        now = self._now()
        if now is not None:
            allowed &= set(now.names())
        chosen = [n for n in wanted if n in allowed and (n in TOOLS or n in self.tools)]
        return sorted(dict.fromkeys(chosen), key=lambda n: list(TOOLS).index(n) if n in TOOLS else len(TOOLS))

    def _child_mcp(self, definition: AgentDefinition) -> list[ToolEntry]:
        """The MCP tools the child gets: the parent turn's that still run, of its `mcpServers`, but
        its `disallowedTools`; with `tools`, those its MCP entries name (`ctxagent.mcp.names.covers`;
        with `mcpServers` and no MCP entry, the servers' tools); none when read-only."""
        if self.mcp is None or _read_only(definition):
            return []
        now = self._now()
        have = None if now is None else set(now.names())
        offered = [e for e in self.mcp.tools() if (self.mcp_names is None or e.name in self.mcp_names)
                   and (have is None or e.name in have)
                   and (definition.mcp_servers is None or e.server in definition.mcp_servers)
                   and not any(covers(denied, e.name) for denied in definition.disallowed)]
        listed = [n for n in definition.tools or () if is_mcp_name(n)]
        if definition.tools is None or (not listed and definition.mcp_servers is not None):
            return offered
        return [e for e in offered if any(covers(wanted, e.name) for wanted in listed)]

    def _restrict(self, definition: AgentDefinition, registry: ToolRegistry) -> None:
        """Narrow the child's tools in place: its terminal to the read-only path when its definition
        denies `Bash` (or is read-only), then each tool within its parent turn's limit (`restrict`)."""
        terminal = registry.get("terminal")
        if terminal is not None and (definition.terminal_read_only or _read_only(definition)):
            registry.tools["terminal"] = LimitedTerminal(terminal, TerminalLimit(reading=True),
                                                         f"the definition of the sub-agent {definition.name!r}")
        now = self._now()
        for name, tool in list(registry.tools.items()):
            restrict = getattr(now.get(name), "restrict", None) if now is not None else None
            if callable(restrict):
                registry.tools[name] = restrict(tool)

    def _report(self, child: Agent, end: TurnEnd) -> tuple[bool, str]:
        if end.reason == "finished":
            return True, end.answer or "(the sub-agent answered nothing)"
        if end.reason in LIMIT_REASONS:
            try:
                return True, child.answer_without_tools(render("subagent_wrapup", why=end.message,
                                                               report_tokens=REPORT_MAX_TOKENS))
            except Exception as exc:  # the wrap-up call failed: what the child last said is the report
                return False, f"{_last_words(child)}\n(the closing report failed: {exc})"
        return False, f"{end.message}\n{_last_words(child)}".strip()


def _known(name: str, servers: dict[str, Any], entries: Sequence[ToolEntry]) -> bool:
    """Whether a `tools`/`disallowedTools` entry (Claude Code's names already mapped) names a
    ctxagent tool, or MCP tools of a running server (of a configured server not running: yes)."""
    if not is_mcp_name(name):
        return name in TOOLS
    if any(covers(name, e.name) for e in entries):
        return True
    running = {e.server for e in entries}
    return any(name.startswith(tool_name(s, "")) or name == tool_name(s, "")[:-2]
               for s in servers if s not in running)


def _read_only(definition: AgentDefinition) -> bool:
    """Claude Code's read-only `permissionMode: plan`; the other modes widen nothing here."""
    return definition.extra.get("permissionMode") == "plan"


def _headed(child_id: str, end: TurnEnd | None, report: str) -> str:
    """`report` cut to REPORT_MAX_TOKENS, under one line saying how the child ended."""
    if estimate_tokens(report) > REPORT_MAX_TOKENS:
        keep = int(len(report) * REPORT_MAX_TOKENS / estimate_tokens(report))
        report = report[:keep].rstrip() + f"\n[report cut at about {REPORT_MAX_TOKENS:,} tokens]"
    if end is None:
        how = "failed"
    elif end.reason == "finished":
        how = f"finished in {end.steps} steps, {end.tokens:,} tokens"
    elif end.reason in LIMIT_REASONS:
        how = f"stopped by its limit ({end.reason}) after {end.steps} steps: partial report"
    else:
        how = f"ended: {end.reason} after {end.steps} steps"
    return f"[sub-agent {child_id}: {how}; transcript .ctxagent/sessions/{child_id.split('.')[0]}/{child_id}.jsonl]\n{report}"


def _last_words(child: Agent) -> str:
    said = [m.get("content") for m in child.session.history if m.get("role") == "assistant" and m.get("content")]
    return f"What it had said last: {said[-1]}" if said else "It had reported nothing yet."


class _Relay:
    """A child's events as the user sees them: its tool calls and notices as one prefixed line,
    its approval requests whole (the user must see what is asked); the rest stays in its transcript."""

    def __init__(self, child_id: str, sinks: Sequence[Sink], lock: threading.Lock) -> None:
        self.child_id, self.sinks, self.lock = child_id, list(sinks), lock

    def __call__(self, event: Event) -> None:
        shown: Event | None = None
        if isinstance(event, ToolCallEvent):
            shown = Notice(message=f"[{self.child_id}] {event.name} {event.arguments[:120]}")
        elif isinstance(event, (Notice, ErrorEvent)):
            shown = Notice(message=f"[{self.child_id}] {event.message}")
        elif isinstance(event, ApprovalRequest):
            shown = event
        elif isinstance(event, TurnEnd):
            shown = Notice(message=f"[{self.child_id}] {event.reason} after {event.steps} steps")
        if shown is None:
            return
        with self.lock:
            send(self.sinks, shown)
