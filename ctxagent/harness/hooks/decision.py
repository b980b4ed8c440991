"""What one hook's run means, by Claude Code's rules: exit 0 goes on (JSON on stdout may carry
`decision`, `permissionDecision`, `additionalContext`, `continue`), exit 2 blocks with stderr
as the reason, any other exit (or a timeout) is a warning and the agent goes on."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ctxagent.harness.hooks.config import HookRule
from ctxagent.harness.hooks.run import HookRun

PERMISSIONS = ("allow", "deny", "ask")
#: Events whose plain (non-JSON) stdout is context for the model (Claude Code: SessionStart, UserPromptSubmit).
PLAIN_CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})
MAX_REASON_CHARS = 4000


@dataclass
class HookResult:
    """One hook's verdict. blocked: exit 2, or `decision: "block"`, or `permissionDecision: "deny"`;
    reason: why (for the model or the user); permission: "allow" | "ask" | None;
    context: text for the model; stop: `continue: false` (end the turn); warning: a problem to show."""

    blocked: bool = False
    reason: str = ""
    permission: str | None = None
    context: list[str] = field(default_factory=list)
    stop: bool = False
    warning: str = ""


def read_run(rule: HookRule, run: HookRun) -> HookResult:
    """The verdict of `run` (one execution of `rule`); never raises: bad JSON is a warning."""
    label = f"{rule.event} hook `{_short(rule.command)}`"
    if run.not_found:
        return HookResult(warning=f"{label} could not start: {run.not_found}")
    if run.timed_out:
        return HookResult(warning=f"{label} was killed after its {rule.timeout_s:g} s timeout; going on")
    if run.exit_code == 2:
        return HookResult(blocked=True, reason=_cut(run.stderr.strip() or f"blocked by {label}"))
    if run.exit_code != 0:
        first = run.stderr.strip().splitlines()[0] if run.stderr.strip() else "no message"
        return HookResult(warning=f"{label} failed (exit {run.exit_code}): {_cut(first)}; going on")
    return _read_stdout(rule, run.stdout, label)


def _read_stdout(rule: HookRule, stdout: str, label: str) -> HookResult:
    text = stdout.strip()
    if not text:
        return HookResult()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        if text.startswith("{"):
            return HookResult(warning=f"{label} printed JSON that could not be read; its output was ignored")
        return HookResult(context=[_cut(text)] if rule.event in PLAIN_CONTEXT_EVENTS else [])
    specific = data.get("hookSpecificOutput") if isinstance(data.get("hookSpecificOutput"), dict) else {}
    result = HookResult(stop=data.get("continue") is False)
    permission = specific.get("permissionDecision", data.get("permissionDecision"))
    decision = data.get("decision")
    reason = specific.get("permissionDecisionReason") or data.get("reason") or data.get("stopReason") or ""
    if permission == "deny" or decision == "block":
        result.blocked, result.reason = True, _cut(str(reason) or f"blocked by {label}")
    elif permission in ("allow", "ask"):
        result.permission, result.reason = permission, _cut(str(reason))
    elif decision == "approve":  # Claude Code's older spelling of allow
        result.permission = "allow"
    for extra in (specific.get("additionalContext"), data.get("additionalContext")):
        if isinstance(extra, str) and extra.strip():
            result.context.append(_cut(extra.strip()))
    if result.stop and not result.reason:
        result.reason = _cut(str(data.get("stopReason") or f"stopped by {label}"))
    return result


def _short(command: str, limit: int = 60) -> str:
    one = " ".join(command.split())
    return one if len(one) <= limit else one[: limit - 3] + "..."


def _cut(text: str) -> str:
    return text if len(text) <= MAX_REASON_CHARS else text[:MAX_REASON_CHARS] + f" ... [{len(text) - MAX_REASON_CHARS} more characters]"


def combine(results: list[HookResult]) -> HookResult:
    """Several hooks of one event as one verdict: any block wins (reasons joined), then "ask",
    then "allow"; contexts and warnings are kept in order; any `stop` stops."""
    out = HookResult()
    blocked = [r for r in results if r.blocked]
    if blocked:
        out.blocked, out.reason = True, "\n".join(r.reason for r in blocked)
    else:
        for wanted in ("ask", "allow"):
            chosen = [r for r in results if r.permission == wanted]
            if chosen:
                out.permission, out.reason = wanted, "\n".join(r.reason for r in chosen if r.reason)
                break
    stopped = [r for r in results if r.stop]
    if stopped:
        out.stop = True
        out.reason = out.reason or "\n".join(r.reason for r in stopped)
    out.context = [c for r in results for c in r.context]
    out.warning = "\n".join(r.warning for r in results if r.warning)
    return out
