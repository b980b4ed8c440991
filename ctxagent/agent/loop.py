"""The agent loop: the model calls tools until it answers without one, or a limit stops it.

`Agent.run_turn`: limits -> assemble -> chat -> record -> run tool calls, repeat. It never
prints: it emits events to its sinks. Tool calls live in `toolcalls.py`, compaction in
`compaction.py`, limits in `limits.py`. The turn, its limits, protocols and Ctrl-C:
docs/architecture.md ("The loop in detail").
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ctxagent.agent.approval import ApprovalPolicy
from ctxagent.agent.compaction import compact_history, compaction_event
from ctxagent.agent.events import (
    Compaction,
    ErrorEvent,
    Event,
    Notice,
    ReasoningDelta,
    Retry,
    Sink,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
    TurnStart,
    UsageEvent,
    send,
)
from ctxagent.agent.limits import TurnStop, check_limits, limits_dict
from ctxagent.agent.prompts import feedback
from ctxagent.agent.replies import protocol_name, read_reply, shown_events, switch_notice, violation_text
from ctxagent.agent.session import Session
from ctxagent.agent.toolcalls import Outcome, ToolRunner
from ctxagent.config.settings import Settings
from ctxagent.context.compaction.compactor import NothingToCompact
from ctxagent.context.messages import INTERRUPTED_RESULT, tool_message, unanswered_calls
from ctxagent.context.request import ChatModel, ContextAssembler, PassthroughAssembler
from ctxagent.errors import CtxAgentError, ProtocolError
from ctxagent.harness.hooks import NO_HOOKS, HookResult, Hooks
from ctxagent.llm.errors import ContextLengthError, LLMCancelledError, ToolsUnsupportedError
from ctxagent.llm.meter import UsageMeter
from ctxagent.llm.usage import Usage
from ctxagent.protocols import FALLBACK, MAX_VIOLATIONS, Decoded, get_protocol
from ctxagent.tools.base import ToolRegistry

MAX_STOP_BLOCKS = 3
"""Stop-hook blocks honoured per turn; then the turn ends anyway (Claude Code's `stop_hook_active` guard)."""


@dataclass
class TurnState:
    """Counters of the running turn: steps = model calls made; usage summed over them."""

    task: str
    started: float = field(default_factory=time.monotonic)
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    violations: int = 0
    """Replies in a row that broke the text protocol."""
    stop_blocks: int = 0
    """Times a Stop hook sent the model back to work this turn (at most MAX_STOP_BLOCKS)."""

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started


#: What an interrupted turn says (the CLI adds how to go on: chat's prompt, or run's --resume).
INTERRUPTED = "stopped by Ctrl-C; the conversation so far is kept"


class Agent:
    """Runs turns of one session; collaborators are injected (protocols, not classes): `client` (a
    ChatModel), `registry`, `session`, `settings`, `system` (prompt text), `assembler` (default
    PassthroughAssembler), `approval`, `sinks` (the transcript is always one), `side_usage` (the
    meter of tools' and compaction's model calls, counted in the turn's limits), `hooks` (docs/hooks.md).
    The protocol: `settings.model.protocol`, or the session's, unless `--protocol` names one."""

    def __init__(self, *, client: ChatModel, registry: ToolRegistry, session: Session, settings: Settings,
                 system: str, assembler: ContextAssembler | None = None, approval: ApprovalPolicy | None = None,
                 sinks: Sequence[Sink] = (), side_usage: UsageMeter | None = None, layer: Any = None,
                 hooks: Hooks = NO_HOOKS, stop_event: str = "Stop",
                 serve: Callable[[float], None] | None = None) -> None:
        self.client = client
        self.side_usage = side_usage
        self._turn: TurnState | None = None
        self.registry = registry
        self.session = session
        self.settings = settings
        self.system = system
        self.assembler = assembler or PassthroughAssembler()
        self.approval = approval or ApprovalPolicy(auto_approve=settings.agent.auto_approve)
        self.sinks: list[Sink] = [session.record_event, *sinks]
        self.hooks = hooks
        self.stop_event = stop_event  # "SubagentStop" for a sub-agent
        self.serve = serve  # answers sub-agents' questions while their calls run (`subagents.AskRelay.serve`)
        self._emit_lock = threading.RLock()
        self.pending_context: list[str] = []  # SessionStart hooks' context, sent with the next prompt
        self.runner = ToolRunner(registry, self.approval, self.emit, max_result_chars=settings.tools.max_result_chars,
                                 secrets=session.secrets, hooks=hooks)
        self.model_calls = 0
        self.protocol = get_protocol(protocol_name(settings, session))
        self.layer = layer  # the harness's SystemLayer (profile files, AGENTS.md chain, skills; /memory reads it)
        self._partial: list[str] = []  # text of the reply being streamed (kept if Ctrl-C cuts it off)

    def emit(self, event: Event) -> None:
        """Send `event` to every sink (one event at a time: tool calls may run in threads); a
        failing sink is skipped, never fatal."""
        with self._emit_lock:
            send(self.sinks, event)

    def run_turn(self, task: str, *, cancel: threading.Event | None = None) -> TurnEnd:
        """Run one user request to its end and return the TurnEnd (also emitted)."""
        self.session.turns += 1
        turn = self._turn = TurnState(task=task)
        self.emit(TurnStart(session_id=self.session.id, turn=self.session.turns, task=task))
        end = TurnEnd(reason="error", message="the turn ended unexpectedly")
        try:
            self.session.add_message({"role": "user", "content": self._submitted(task)})
            answer = self._steps(turn, cancel)
            end = TurnEnd(reason="finished", answer=answer)
        except TurnStop as stop:
            end = TurnEnd(reason=stop.reason, message=stop.message)
        except (KeyboardInterrupt, LLMCancelledError):
            self._keep_interrupted_reply()
            end = TurnEnd(reason="interrupted", message=INTERRUPTED)
        except CtxAgentError as exc:  # model failures, and e.g. a request that cannot fit (ContextOverflowError)
            self.emit(ErrorEvent(message=str(exc), kind=type(exc).__name__))
            end = TurnEnd(reason="error", message=str(exc))
        finally:
            self._close_open_calls()
            self._count_side_calls()
            self._turn = None
            end.steps, end.elapsed_s = turn.steps, round(turn.elapsed_s, 3)
            end.tokens, end.cost_usd = turn.usage.total_tokens, turn.usage.cost_usd
            end.limits = limits_dict(self.settings.agent)
            self.emit(end)
        return end

    def _steps(self, turn: TurnState, cancel: threading.Event | None) -> str:
        while True:
            self._count_side_calls()
            check_limits(self.settings.agent, steps=turn.steps, usage=turn.usage, elapsed_s=turn.elapsed_s)
            if cancel is not None and cancel.is_set():
                raise KeyboardInterrupt
            turn.steps += 1
            response = self._call_model(turn, cancel)
            turn.usage = turn.usage + response.usage
            self.emit(_usage_event(response.usage, turn.usage))
            self._count_side_calls()  # e.g. the summary of a compaction made for this call
            response, decoded = read_reply(self.protocol, response, self.registry.schemas())
            self._show(decoded)
            self.session.add_message(response.assistant_message(self.settings.model), usage=response.usage.to_dict())
            if decoded is not None and decoded.kind == "violation":
                self._violation(turn, response.tool_calls[0].id, decoded)
                continue
            turn.violations = 0
            if not response.tool_calls:
                if self._stop_blocked(turn, response.content or ""):
                    continue
                return response.content or ""
            self._run_tools(response, turn, cancel)

    def start_session(self, source: str) -> None:
        """Fire SessionStart (`source`: "startup" or "resume"); its context goes with the next prompt."""
        self.pending_context += self._hook("SessionStart", source, source=source).context

    def end_session(self, reason: str = "exit") -> None:
        """Fire SessionEnd (`reason`: "exit", "clear"...); its verdict cannot stop anything."""
        self._hook("SessionEnd", None, reason=reason)

    def _hook(self, event: str, subject: str | None, **fields: Any) -> HookResult:
        """Fire `event`'s hooks; their warnings become notices."""
        result = self.hooks.fire(event, subject, **fields)
        if result.warning:
            self.emit(Notice(message=result.warning))
        return result

    def _submitted(self, task: str) -> str:
        """The user message for `task` after UserPromptSubmit hooks (their context, and pending
        SessionStart context, after the prompt). Raises TurnStop("blocked") when a hook blocks it."""
        result = self._hook("UserPromptSubmit", None, prompt=task)
        if result.blocked or result.stop:
            raise TurnStop("blocked", f"a UserPromptSubmit hook blocked this prompt: {result.reason}")
        context, self.pending_context = [*self.pending_context, *result.context], []
        if not context:
            return task
        return task + "\n\n[Context from the user's hooks]\n" + "\n\n".join(context)

    def _stop_blocked(self, turn: TurnState, answer: str) -> bool:
        """Fire Stop; True when a hook sends the model back to work (its reason is the next user
        message), at most MAX_STOP_BLOCKS times a turn."""
        result = self._hook(self.stop_event, None, stop_hook_active=turn.stop_blocks > 0, last_assistant_message=answer)
        if not result.blocked or result.stop:
            return False
        if turn.stop_blocks >= MAX_STOP_BLOCKS:
            self.emit(Notice(message=f"{self.stop_event} hooks blocked the end of this turn {MAX_STOP_BLOCKS} times; it ends now"))
            return False
        turn.stop_blocks += 1
        self.emit(Notice(message=f"a {self.stop_event} hook asked the model to go on: {result.reason}"))
        self.session.add_message({"role": "user", "content": f"[{self.stop_event} hook] {result.reason}"})
        return True

    def answer_without_tools(self, prompt: str) -> str:
        """Send `prompt` as a user message and return the model's answer from one call offered no
        tools (a sub-agent's closing report when a limit stopped it). Raises CtxAgentError."""
        self.session.add_message({"role": "user", "content": prompt})
        self.model_calls += 1
        request = self.assembler.assemble(self._messages(), [], self._state(TurnState(task=prompt)))
        self._emit_built(request)
        messages, _ = self.protocol.encode(request.messages, [])
        response = self.client.chat(messages, None)
        self.session.add_message(response.assistant_message(self.settings.model), usage=response.usage.to_dict())
        return response.content or ""

    def _call_model(self, turn: TurnState, cancel: threading.Event | None) -> Any:
        tools = self.registry.schemas()
        try:
            return self._chat(turn, tools, cancel)
        except ContextLengthError as exc:
            self.compact(str(exc))
            return self._chat(turn, tools, cancel)  # once: a second ContextLengthError ends the turn

    def _chat(self, turn: TurnState, tools: list[dict[str, Any]], cancel: threading.Event | None) -> Any:
        self.model_calls += 1
        self._partial = []
        request = self.assembler.assemble(self._messages(), tools, self._state(turn))
        self._emit_built(request)
        messages, wire_tools = self.protocol.encode(request.messages, tools)
        try:
            return self.client.chat(messages, wire_tools, on_delta=self._on_delta, cancel=cancel, on_retry=self._on_retry)
        except ToolsUnsupportedError as exc:
            if not self.protocol.native:
                raise
            self.switch_protocol(FALLBACK, reason=exc.message)
            return self._chat(turn, tools, cancel)

    def switch_protocol(self, name: str, *, reason: str) -> None:
        """Use protocol `name` from the next request on; record it in the session (a resume
        keeps it) and emit a Notice saying why. Raises ConfigError for an unknown name."""
        previous, self.protocol = self.protocol.name, get_protocol(name)
        self.session.record_protocol(name, reason)
        self.emit(Notice(message=switch_notice(previous, name, reason)))

    def _show(self, decoded: Decoded | None) -> None:
        """A text protocol's reply as the user sees it: the thought, then the answer (never the raw tags)."""
        for event in shown_events(decoded):
            self.emit(event)

    def _violation(self, turn: TurnState, call_id: str, decoded: Decoded) -> None:
        """Answer a reply that broke the protocol with the correction; end the turn after MAX_VIOLATIONS in a row."""
        turn.violations += 1
        correction = self.protocol.correction(decoded.problem, self.registry.schemas())
        self._add_result(call_id, "protocol_error", Outcome(False, correction, "invalid"))
        if turn.violations >= MAX_VIOLATIONS:
            raise ProtocolError(violation_text(self.protocol.name, turn.violations, decoded.problem, final=True))
        self.emit(Notice(message=violation_text(self.protocol.name, turn.violations, decoded.problem)))

    def _emit_built(self, request: Any) -> None:
        """Emit what happened while `request` was built: its notices, then its automatic
        compaction's event, then its view written to the transcript (after the event: a
        resumed session rebuilds that view, see `Session.record_view`)."""
        for text in getattr(request, "notices", None) or ():
            self.emit(Notice(message=text))
        if getattr(request, "compaction", None) is not None:
            self.emit(compaction_event(request.compaction))
        if getattr(request, "view", None) is not None:
            self.session.record_view(request.view)

    def _messages(self) -> list[dict[str, Any]]:
        return [{"role": "system", "content": self.system}, *self.session.history]

    def _state(self, turn: TurnState) -> dict[str, Any]:
        model = self.settings.model
        return {"session_id": self.session.id, "turn": self.session.turns, "step": turn.steps,
                "call_index": self.model_calls, "task": turn.task, "repo": str(self.session.repo),
                "model": model.model, "context_window": model.context_window,
                "max_output_tokens": model.max_output_tokens, "protocol": self.protocol.name}

    def _count_side_calls(self) -> None:
        """Add the side calls' usage since the last count to the running turn (or, outside a
        turn, as after a manual `/compact`, only report it) with one usage event."""
        extra = self.side_usage.take() if self.side_usage is not None else Usage()
        if not extra.total_tokens and not extra.cost_usd:
            return
        turn = self._turn
        if turn is not None:
            turn.usage = turn.usage + extra
        self.emit(_usage_event(extra, turn.usage if turn is not None else extra))

    def _on_delta(self, delta: Any) -> None:
        if delta.kind == "text":
            self._partial.append(delta.text)
        if delta.kind == "text" and not self.protocol.native:
            return  # raw protocol text: shown once decoded (`_show`)
        if delta.kind == "text":
            self.emit(TextDelta(text=delta.text))
        elif delta.kind == "reasoning":
            self.emit(ReasoningDelta(text=delta.text))

    def _on_retry(self, notice: Any) -> None:
        """Tell the sinks that the model call is sent again after a wait (a `RetryNotice`)."""
        self._partial = []  # the call starts its reply again
        self.emit(Retry(attempt=notice.attempt, attempts=notice.attempts, wait_s=round(notice.wait_s, 3),
                        message=str(notice), kind=type(notice.error).__name__, status=notice.error.status))

    def compact(self, reason: str, *, manual: bool = False, focus: str | None = None) -> Compaction | None:
        """Compact the history now (after a context-length error, or `/compact`); emit and return
        the event, whose `details` is the assembler's CompactionRecord. With nothing to compact a
        Notice says so ("nothing to compact: 12% of the window"), the history is unchanged and
        None is returned: a compaction that did nothing is not one."""
        verdict = self.hooks.pre_compact("manual" if manual else "auto", focus or "")
        for said in verdict.notices:
            self.emit(Notice(message=said))
        if verdict.blocked is not None:  # the history stays as it is; after an overflow the next call says so
            return None
        before = self._messages()
        try:
            after, method = compact_history(self.assembler, before, manual=manual, focus=focus)
        except NothingToCompact as exc:
            self._emit_notices()
            self.emit(Notice(message=str(exc)))
            return None
        if after and after[0].get("role") == "system":
            after = after[1:]
        self.session.replace_history(after)  # recorded: a resumed session goes on from the compacted history
        self._emit_notices()
        record = getattr(self.assembler, "last_record", None)
        if record is not None:  # how it was compacted (masking, llm, extractive), not by whom
            details, method = record.to_dict(), record.method
        else:
            details = {"trigger": "manual" if manual else "overflow"}
        event = Compaction(reason=reason, method=method, messages_before=len(before), messages_after=len(after) + 1,
                           details=details)
        self.emit(event)
        if self._turn is None:  # a manual compaction between turns: its summary call belongs to none
            self._count_side_calls()
        return event

    def _emit_notices(self) -> None:
        take_notices = getattr(self.assembler, "take_notices", None)
        for text in take_notices() if callable(take_notices) else ():
            self.emit(Notice(message=text))

    def _run_tools(self, response: Any, turn: TurnState, cancel: threading.Event | None) -> None:
        """Run the reply's calls in order; a run of calls to a `concurrent` tool (delegate) runs at once."""
        try:
            for group in _groups(response.tool_calls, self.registry):
                if cancel is not None and cancel.is_set():
                    raise KeyboardInterrupt
                if len(group) > 1 or getattr(self.registry.get(group[0].name), "concurrent", False):
                    self._run_concurrently(group, turn, response.finish_reason, cancel)
                    continue
                call = group[0]
                self.emit(ToolCallEvent(call_id=call.id, name=call.name, arguments=call.arguments, step=turn.steps))
                outcome = self.runner.run(call.id, call.name, call.arguments, finish_reason=response.finish_reason)
                self._add_result(call.id, call.name, outcome)
        except KeyboardInterrupt as exc:
            if getattr(exc, "report", None):  # the tool says what it did before stopping (apply_patch: restored)
                self._add_result(call.id, call.name, Outcome(False, str(exc.report), "interrupted"))
            raise TurnStop("interrupted", "interrupted while running tools; the calls not run were recorded "
                           "as not executed") from None

    def _run_concurrently(self, calls: list[Any], turn: TurnState, finish_reason: str | None,
                          cancel: threading.Event | None) -> None:
        """Run `calls` in threads (at most `[agent] max_concurrent_subagents` at once), answering their
        questions on this thread; results in call order. Ctrl-C interrupts every one, then passes."""
        for call in calls:
            self.emit(ToolCallEvent(call_id=call.id, name=call.name, arguments=call.arguments, step=turn.steps))
        with ThreadPoolExecutor(max_workers=self.settings.agent.max_concurrent_subagents,
                                thread_name_prefix="ctxagent-tool") as pool:
            futures = [pool.submit(self.runner.run, c.id, c.name, c.arguments, finish_reason=finish_reason) for c in calls]
            try:
                while not all(f.done() for f in futures):
                    if cancel is not None and cancel.is_set():
                        raise KeyboardInterrupt
                    if self.serve is not None:
                        self.serve(0.1)
                    else:
                        wait(futures, timeout=0.1, return_when=FIRST_COMPLETED)
            except KeyboardInterrupt:
                for name in dict.fromkeys(c.name for c in calls):
                    stop = getattr(self.registry.get(name), "interrupt", None)
                    if callable(stop):
                        stop()
                wait(futures)
                for call, future in zip(calls, futures):
                    if future.exception() is None:
                        self._add_result(call.id, call.name, future.result())
                raise
        for call, future in zip(calls, futures):
            error = future.exception()
            outcome = future.result() if error is None else Outcome(False, f"{call.name} failed: {error}", "crashed")
            self._add_result(call.id, call.name, outcome)

    def _add_result(self, call_id: str, name: str, outcome: Outcome) -> None:
        self.session.add_message(tool_message(call_id, outcome.content))
        self.emit(ToolResultEvent(call_id=call_id, name=name, ok=outcome.ok, content=outcome.content,
                                  status=outcome.status))

    def _keep_interrupted_reply(self) -> None:
        """After Ctrl-C while the model was answering: record the text it had streamed (a text
        protocol's raw reply is left out), then the "[interrupted by the user]" mark, as its
        message, so the next request says what happened (not the bridging "Ok." of
        `context.fitting.alternate`). Nothing after an assistant message (its calls get results)."""
        history = self.session.history
        last = history[-1].get("role") if history else None
        partial = "".join(self._partial).strip() if self.protocol.native else ""
        self._partial = []
        if last == "user" or (last == "tool" and partial):
            mark = feedback("interrupted_reply")
            self.session.add_message({"role": "assistant", "content": f"{partial}\n\n{mark}" if partial else mark})

    def _close_open_calls(self) -> None:
        """Give every call still without a result the synthetic "not executed: interrupted" one (C02)."""
        names = {c["id"]: c["function"]["name"] for m in self.session.history if m.get("role") == "assistant"
                 for c in m.get("tool_calls") or []}
        for call_id in unanswered_calls(self.session.history):
            self._add_result(call_id, names.get(call_id, "?"), Outcome(False, INTERRUPTED_RESULT, "interrupted"))


def _groups(calls: Sequence[Any], registry: ToolRegistry) -> list[list[Any]]:
    """`calls` in order, cut into runs: consecutive calls of `concurrent` tools together, every other call alone."""
    groups: list[list[Any]] = []
    for call in calls:
        together = getattr(registry.get(call.name), "concurrent", False)
        if together and groups and getattr(registry.get(groups[-1][0].name), "concurrent", False):
            groups[-1].append(call)
        else:
            groups.append([call])
    return groups


def _usage_event(call: Usage, turn: Usage) -> UsageEvent:
    return UsageEvent(prompt_tokens=call.prompt_tokens, completion_tokens=call.completion_tokens,
                      cached_tokens=call.cached_tokens, reasoning_tokens=call.reasoning_tokens,
                      cost_usd=call.cost_usd, turn_prompt_tokens=turn.prompt_tokens,
                      turn_completion_tokens=turn.completion_tokens, turn_cost_usd=turn.cost_usd)
