"""`/permissions` in `ctxagent chat`: the mode, the sandbox, the rules, and this session's
"always" answers; `/permissions revoke N|KEY` (or `clear`) takes answers back."""

from __future__ import annotations

from typing import Any, Callable

from rich.markup import escape

from ctxagent.cli.wrap import soft
from ctxagent.errors import ToolRefusedError
from ctxagent.exec.sandbox import choose


def register_slash_commands(register: Callable[[str, str, Any], None]) -> None:
    """Add /permissions (`ctxagent.cli.slash` calls this)."""
    register("permissions", "mode, sandbox, rules and this session's 'always' answers "
                            "(/permissions revoke N|KEY, /permissions clear)", permissions)


def permissions(ctx: Any, arg: str) -> None:
    """Show the permissions, or revoke "always" answers (`revoke N|KEY`, `clear`)."""
    approval = ctx.agent.approval
    word, _, rest = arg.partition(" ")
    if word == "clear":
        count = len(approval.grants)
        approval.grants.clear()
        ctx.console.print(f"revoked {count} 'always' answer(s); those commands are asked again")
        return
    if word == "revoke":
        _revoke(ctx, approval, rest.strip())
        return
    if word:
        ctx.console.print("[yellow]usage:[/] /permissions, /permissions revoke N|KEY, /permissions clear")
        return
    for line in describe(ctx.agent.settings, approval):
        ctx.console.print(escape(line), soft_wrap=soft(ctx.console))


def describe(settings: Any, approval: Any) -> list[str]:
    """The lines /permissions shows."""
    policy = settings.exec_policy()
    try:
        sandbox = choose(policy.sandbox, network=policy.network).describe()
    except ToolRefusedError as exc:
        sandbox = str(exc)
    lines = [f"mode: {policy.mode}" + ("" if policy.mode == "workspace-write" else
                                       " (commands and python_exec are refused; --mode workspace-write)"),
             f"sandbox: {sandbox}",
             "commands and code without asking: " + ("yes (--allow-exec / approval = \"never\")"
                                                     if approval.allow_exec else "no"),
             "allow rules: " + (", ".join(r.text for r in policy.rules.allow) or "none"),
             "deny rules: " + (", ".join(r.text for r in policy.rules.deny) or "none")]
    if approval.grants:
        lines.append("'always' this session:")
        lines += [f"  {i}. {key} ({tool})" for i, (key, tool) in enumerate(approval.grants.items(), 1)]
    else:
        lines.append("'always' this session: none")
    return lines


def _revoke(ctx: Any, approval: Any, which: str) -> None:
    keys = list(approval.grants)
    key = keys[int(which) - 1] if which.isdigit() and 0 < int(which) <= len(keys) else which
    if key and approval.revoke(key):
        ctx.console.print(f"revoked 'always' for {escape(key)}: it is asked again")
    else:
        ctx.console.print(f"[yellow]no 'always' answer {escape(which or '(none given)')}[/]; see /permissions")
