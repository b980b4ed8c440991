"""Running a custom command: expand its body, then one turn with its model and tools.

The expanded prompt is sent as the user's message of one turn; `model` (front matter)
switches the model for that turn only, `allowed-tools` restricts that turn's tools
(`ctxagent.cli.slash.allowed_tools`); both are put back after the turn, whatever happens.
Repository commands are content, like AGENTS.md: they may choose the model name (a setting
an untrusted repository config may set too) and only narrow the tools, and their
`` !`cmd` `` runs through the read-only terminal only, so they are honoured without trust.
"""

from __future__ import annotations

from typing import Any

from ctxagent.agent.overrides import turn_overrides
from ctxagent.cli.slash.allowed_tools import grant_for, offered_tools
from ctxagent.cli.slash.context import ChatContext
from ctxagent.cli.slash.custom import CustomCommand, discover
from ctxagent.cli.slash.expand import expand, terminal_runner
from ctxagent.cli.slash.registry import SlashCommand
from ctxagent.cli.wrap import soft
from ctxagent.errors import CtxAgentError
from ctxagent.tools.terminal import TerminalTool


def custom_commands(ctx: ChatContext, builtin_names: list[str]) -> list[SlashCommand]:
    """The custom commands found now as SlashCommands; warnings (a bad file, a name a built-in
    takes) are shown once per session."""
    found, warnings = discover(ctx.repo)
    for text in warnings:
        ctx.warn_once(text)
    out = []
    for command in found:
        if command.name in builtin_names:
            ctx.warn_once(f"custom command /{command.name} ({command.path}) is not used: the built-in "
                          f"/{command.name} takes the name; rename the file")
            continue
        out.append(SlashCommand(name=command.name, args=command.argument_hint,
                                description=command.description or "(no description)",
                                handler=_handler(command), source=f"{command.scope}: {command.path}"))
    return out


def _handler(command: CustomCommand) -> Any:
    def run(ctx: ChatContext, arg: str) -> None:
        run_custom(ctx, command, arg)

    return run


def run_custom(ctx: ChatContext, command: CustomCommand, arg: str) -> None:
    """Expand `command` with `arg`, show what went in, and run one turn with its overrides."""
    agent = ctx.agent
    terminal = TerminalTool.for_repo(ctx.repo, agent.settings)
    expansion = expand(command.body, arg, repo=ctx.repo, run=terminal_runner(terminal))
    if not expansion.text.strip():
        ctx.console.print(f"/{command.name}: the command's prompt is empty ({command.path})", style="yellow",
                          markup=False)
        return
    tools = None
    if command.allowed_tools is not None:
        grant = grant_for(command.allowed_tools, agent.registry.names())
        for rule in grant.unknown:
            ctx.warn_once(f"/{command.name}: allowed-tools {rule} grants nothing here")
        tools = offered_tools(grant, agent.registry)
        _say(ctx, f"tools for this turn: {', '.join(grant_lines(grant)) or 'none'}")
    _report(ctx, command, expansion)
    try:
        with turn_overrides(agent, model=command.model, tools=tools):
            if command.model:
                _say(ctx, f"model for this turn: {command.model}")
            ctx.run_turn(expansion.text)
    except CtxAgentError as exc:
        ctx.console.print(f"/{command.name}: {exc}", style="red", markup=False, soft_wrap=soft(ctx.console))


def grant_lines(grant: Any) -> list[str]:
    """`terminal (only: git status:*)`, `apply_patch`...: what a grant offers, for the user."""
    return [name if limit is None else f"{name} (only: {limit.describe()})" for name, limit in grant.tools.items()]


def _report(ctx: ChatContext, command: CustomCommand, expansion: Any) -> None:
    parts = []
    if expansion.files:
        parts.append("inlined " + ", ".join(expansion.files))
    if expansion.commands:
        parts.append("ran " + ", ".join(f"`{c}`" for c in expansion.commands))
    if parts:
        _say(ctx, f"/{command.name}: " + "; ".join(parts))
    for refusal in expansion.refusals:
        ctx.console.print(f"/{command.name}: refused {refusal}", style="yellow", markup=False, soft_wrap=soft(ctx.console))


def _say(ctx: ChatContext, text: str) -> None:
    ctx.console.print(text, style="dim", markup=False, soft_wrap=soft(ctx.console))
