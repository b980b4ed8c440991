"""Run one tool call the model asked for, and turn whatever happens into one result.

Order: parse the raw arguments (case L01) -> look the tool up -> for tools that need
approval, build the preview and ask the `ApprovalPolicy` (tools that run commands or
code give a `Gate` instead: refused, rule-allowed or asked, `ApprovalPolicy.decide_gate`) -> for tools that keep what they
are given (`Tool.writes_state`: notes, todo, memory, rag, plan), redact the session's
secrets and key-shaped strings from the arguments (`redacted_arguments`; keys never reach
`.ctxagent/`, breaker report F7) -> `Tool.execute` -> clip the
result to `tools.max_result_chars` (head and tail kept, marked; case C05). Every path
ends in exactly one `Outcome`, which the loop sends as the call's `tool` message
(case C02): invalid arguments, an unknown tool, a refusal and a crash are results, not
exceptions. Only KeyboardInterrupt (Ctrl-C while a tool or the approval prompt runs)
passes through, and the loop answers the remaining calls itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ctxagent.agent.approval import ApprovalPolicy
from ctxagent.agent.arguments import parse_arguments, redacted_arguments  # noqa: F401 - re-exported
from ctxagent.agent.events import ApprovalRequest, Event
from ctxagent.agent.prompts import feedback
from ctxagent.context.messages import truncate_tool_result
from ctxagent.errors import CtxAgentError
from ctxagent.exec.gate import Gate
from ctxagent.redaction import redact_known
from ctxagent.tools.base import Tool, ToolRegistry


@dataclass(frozen=True)
class Outcome:
    """The result of one call. `status`: ran, invalid, unknown, refused, interrupted, crashed."""

    ok: bool
    content: str
    status: str = "ran"


class ToolRunner:
    """Runs calls against `registry`, asking `approval` and reporting through `emit`.

    max_result_chars: characters of a result kept in the history (Settings.tools.max_result_chars).
    secrets: strings redacted from the arguments of state-writing tools (`Settings.secrets()`).
    """

    def __init__(self, registry: ToolRegistry, approval: ApprovalPolicy, emit: Callable[[Event], None],
                 *, max_result_chars: int, secrets: Iterable[str] = ()) -> None:
        self.registry = registry
        self.approval = approval
        self.emit = emit
        self.max_result_chars = max_result_chars
        self.secrets = list(secrets)

    def run(self, call_id: str, name: str, raw_arguments: str, *, finish_reason: str | None = None) -> Outcome:
        """Execute one call; never raises except KeyboardInterrupt."""
        parsed = parse_arguments(raw_arguments, finish_reason=finish_reason)
        if not parsed.ok:
            return Outcome(False, feedback("invalid_arguments", name=name, problem=parsed.problem,
                                           truncated=parsed.truncated), "invalid")
        tool = self.registry.get(name)
        if tool is None:
            kind = "python_unavailable" if name == "python_exec" else "unknown_tool"  # <python> of a text protocol
            return Outcome(False, feedback(kind, name=name, available=self.registry.names()), "unknown")
        gate_of = getattr(tool, "gate", None)
        if callable(gate_of):
            refusal = self._gate(call_id, tool, gate_of, parsed.args)
            if refusal is not None:
                return refusal
        elif getattr(tool, "needs_approval", False):
            refusal = self._approve(call_id, tool, parsed.args)
            if refusal is not None:
                return refusal
        try:
            result = tool.execute(redacted_arguments(tool, parsed.args, self.secrets))
        except Exception as exc:  # execute() should never raise; a buggy tool must not end the session
            return Outcome(False, feedback("crashed", name=name, error=f"{type(exc).__name__}: {exc}"), "crashed")
        content = redact_known(str(result.content), self.secrets)  # an API key a command printed (from /proc/PPID/environ, say)
        return Outcome(bool(result.ok), truncate_tool_result(content, self.max_result_chars))

    def _approve(self, call_id: str, tool: Tool, args: dict[str, Any]) -> Outcome | None:
        """None when approved; otherwise the Outcome to send instead of running."""
        try:
            preview = _preview(tool, args)
        except CtxAgentError as exc:
            return Outcome(False, feedback("invalid_preview", name=tool.name, error=str(exc)), "invalid")
        except Exception as exc:
            return Outcome(False, feedback("crashed", name=tool.name, error=f"{type(exc).__name__}: {exc}"), "crashed")
        self.emit(ApprovalRequest(call_id=call_id, name=tool.name, preview=preview, auto=self.approval.pre_approved))
        decision = self.approval.decide(tool.name, preview)
        if decision.approved:
            return None
        return Outcome(False, feedback("refused", name=tool.name, reason=decision.reason), "refused")


    def _gate(self, call_id: str, tool: Tool, gate_of: Callable[[dict[str, Any]], Gate | None],
              args: dict[str, Any]) -> Outcome | None:
        """For tools that run commands or code (`tool.gate(args)`: a `Gate`, or None when the
        call needs no approval): None when it may run (the gate is marked approved),
        else the Outcome to send instead."""
        try:
            gate = gate_of(args)
        except CtxAgentError as exc:
            return Outcome(False, feedback("invalid_preview", name=tool.name, error=str(exc)), "invalid")
        except Exception as exc:
            return Outcome(False, feedback("crashed", name=tool.name, error=f"{type(exc).__name__}: {exc}"), "crashed")
        if gate is None:
            return None
        if gate.refusal:
            return Outcome(False, gate.refusal, "refused")
        why = self.approval.gate_pre_approved(gate)
        self.emit(ApprovalRequest(call_id=call_id, name=tool.name, preview=gate.subject, auto=bool(why),
                                  language=gate.language, details="\n".join(gate.details), auto_reason=why))
        decision = self.approval.decide_gate(gate)
        if decision.approved:
            gate.approved = True
            return None
        return Outcome(False, feedback("refused", name=tool.name, reason=decision.reason), "refused")


def _preview(tool: Tool, args: dict[str, Any]) -> str:
    method = getattr(tool, "preview", None)
    if callable(method):
        return str(method(args))
    return json.dumps(args, indent=2, ensure_ascii=False)
