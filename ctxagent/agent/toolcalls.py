"""Run one tool call the model asked for, and turn whatever happens into one result.

parse arguments -> look up -> approval or `Gate` -> redact stored arguments
(`redacted_arguments`) -> `Tool.execute` -> clip to `tools.max_result_chars`. Every path
ends in one `Outcome` (case C02); only KeyboardInterrupt passes through.
Order and cases: docs/architecture.md ("The loop in detail").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ctxagent.agent.approval import ApprovalPolicy
from ctxagent.agent.arguments import parse_arguments, redacted_arguments  # noqa: F401 - re-exported
from ctxagent.agent.events import ApprovalRequest, Event, Notice
from ctxagent.agent.prompts import feedback
from ctxagent.context.messages import truncate_tool_result
from ctxagent.errors import CtxAgentError
from ctxagent.exec.gate import Gate
from ctxagent.harness.hooks import NO_HOOKS, HookResult, Hooks
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
    hooks: the session's PreToolUse / PostToolUse hooks (docs/hooks.md).
    """

    def __init__(self, registry: ToolRegistry, approval: ApprovalPolicy, emit: Callable[[Event], None],
                 *, max_result_chars: int, secrets: Iterable[str] = (), hooks: Hooks = NO_HOOKS) -> None:
        self.registry = registry
        self.approval = approval
        self.emit = emit
        self.max_result_chars = max_result_chars
        self.secrets = list(secrets)
        self.hooks = hooks

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
        pre = self._hook("PreToolUse", name, tool_name=name, tool_input=parsed.args)
        if pre.blocked or pre.stop:
            return Outcome(False, feedback("hook_blocked", name=name, reason=pre.reason), "refused")
        gate_of = getattr(tool, "gate", None)
        if callable(gate_of):
            refusal = self._gate(call_id, tool, gate_of, parsed.args, pre.permission)
            if refusal is not None:
                return refusal
        elif getattr(tool, "needs_approval", False):
            refusal = self._approve(call_id, tool, parsed.args, pre.permission)
            if refusal is not None:
                return refusal
        try:
            result = tool.execute(redacted_arguments(tool, parsed.args, self.secrets))
        except Exception as exc:  # execute() should never raise; a buggy tool must not end the session
            return Outcome(False, feedback("crashed", name=name, error=f"{type(exc).__name__}: {exc}"), "crashed")
        content = redact_known(str(result.content), self.secrets)  # an API key a command printed (from /proc/PPID/environ, say)
        content = truncate_tool_result(content, self.max_result_chars)
        post = self._hook("PostToolUse", name, tool_name=name, tool_input=parsed.args,
                          tool_response={"ok": bool(result.ok), "content": content})
        return Outcome(bool(result.ok), content + _post_note(post))

    def _hook(self, event: str, name: str, **fields: Any) -> HookResult:
        """Fire `event`'s hooks for tool `name`; their warnings become notices."""
        result = self.hooks.fire(event, name, **fields)
        if result.warning:
            self.emit(Notice(message=result.warning))
        return result

    def _approve(self, call_id: str, tool: Tool, args: dict[str, Any], hook: str | None = None) -> Outcome | None:
        """None when approved; otherwise the Outcome to send instead of running. `hook`: a
        PreToolUse hook's "allow" (no question) or "ask" (a question even under --yes)."""
        try:
            preview = _preview(tool, args)
        except CtxAgentError as exc:
            return Outcome(False, feedback("invalid_preview", name=tool.name, error=str(exc)), "invalid")
        except Exception as exc:
            return Outcome(False, feedback("crashed", name=tool.name, error=f"{type(exc).__name__}: {exc}"), "crashed")
        if hook == "allow":
            self.emit(ApprovalRequest(call_id=call_id, name=tool.name, preview=preview, auto=True,
                                      auto_reason="allowed by a PreToolUse hook"))
            return None
        ask = hook == "ask"
        with self.approval.asking:
            self.emit(ApprovalRequest(call_id=call_id, name=tool.name, preview=preview,
                                      auto=self.approval.pre_approved and not ask))
            decision = self.approval.decide(tool.name, preview, force_ask=ask)
        if decision.approved:
            return None
        return Outcome(False, feedback("refused", name=tool.name, reason=decision.reason), "refused")


    def _gate(self, call_id: str, tool: Tool, gate_of: Callable[[dict[str, Any]], Gate | None],
              args: dict[str, Any], hook: str | None = None) -> Outcome | None:
        """For tools that run commands or code (`tool.gate(args)`: a `Gate`, or None when the
        call needs no approval): None when it may run (the gate is marked approved),
        else the Outcome to send instead. `hook`: as for `_approve` (a refusal still wins)."""
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
        why = "allowed by a PreToolUse hook" if hook == "allow" else ("" if hook == "ask" else self.approval.gate_pre_approved(gate))
        with self.approval.asking:
            self.emit(ApprovalRequest(call_id=call_id, name=tool.name, preview=gate.subject, auto=bool(why),
                                      language=gate.language, details="\n".join(gate.details), auto_reason=why))
            if hook == "allow":
                gate.approved = True
                return None
            decision = self.approval.decide_gate(gate, force_ask=hook == "ask")
        if decision.approved:
            gate.approved = True
            return None
        return Outcome(False, feedback("refused", name=tool.name, reason=decision.reason), "refused")


def _post_note(post: HookResult) -> str:
    """What PostToolUse hooks add to the result the model reads: a block's reason, then context."""
    parts = [f"[PostToolUse hook] {post.reason}"] if (post.blocked or post.stop) and post.reason else []
    parts += [f"[PostToolUse hook context] {text}" for text in post.context]
    return "".join(f"\n\n{part}" for part in parts)


def _preview(tool: Tool, args: dict[str, Any]) -> str:
    method = getattr(tool, "preview", None)
    if callable(method):
        return str(method(args))
    return json.dumps(args, indent=2, ensure_ascii=False)
