"""Slash commands of `ctxagent chat`: a registry of built-ins plus the user's Markdown commands.

`/name args` (or `:name args`, HelloCodeAgentCli's form) runs a command. Built-ins come
from the modules in `SLASH_MODULES`, each exposing `register_slash_commands(register)` and
calling `register(name, help, handler, args="ARGS")`; `register_slash` does the same from
anywhere. Custom commands are Markdown files (`ctxagent.cli.slash.custom`), read again at
each use; a built-in name always wins over a custom one. Reference: docs/slash-commands.md.
"""

from __future__ import annotations

import importlib

from ctxagent.cli.slash.context import ChatContext
from ctxagent.cli.slash.registry import Handler, Registry, SlashCommand, parse_line, register_into, suggest
from ctxagent.cli.wrap import soft

__all__ = ["ChatContext", "SLASH_MODULES", "SlashCommand", "all_commands", "dispatch", "is_command",
           "register_slash"]

#: Modules exposing `register_slash_commands(register)`, imported on first use, in /help order.
SLASH_MODULES: tuple[str, ...] = (
    "ctxagent.cli.slash.basic",
    "ctxagent.cli.slash.state",
    "ctxagent.cli.slash.memory",
    "ctxagent.cli.context_chat",
    "ctxagent.cli.slash.usage",
    "ctxagent.cli.permissions_chat",
    "ctxagent.cli.checkpoints_chat",
    "ctxagent.cli.slash.model",
    "ctxagent.cli.slash.mcp",
)

_REGISTRY = Registry()
_loaded = False


def register_slash(name: str, help_text: str, handler: Handler, args: str = "") -> None:
    """Add or replace the built-in `/name`; `help_text` is its line in /help, `args` its hint."""
    _load()
    register_into(_REGISTRY)(name, help_text, handler, args)


def builtins() -> Registry:
    """The registry of built-in commands (loaded on first use, with any `register_slash` since)."""
    _load()
    return _REGISTRY


def module_commands() -> Registry:
    """A new registry holding only what SLASH_MODULES register (the documented built-ins)."""
    registry = Registry()
    _register_modules(registry)
    return registry


def all_commands(ctx: ChatContext) -> list[SlashCommand]:
    """Built-ins, then the custom commands found now (those a built-in shadows left out)."""
    from ctxagent.cli.slash.custom_run import custom_commands

    return [*builtins().commands(), *custom_commands(ctx, builtins().names())]


def is_command(line: str, ctx: ChatContext) -> bool:
    """Whether the chat should treat `line` as a command: any line starting with `/`, and a
    `:name` line whose name is a known command (else `:)` or `:note` go to the model as
    text). A line starting with a space is always a message."""
    if line.startswith("/"):
        return True
    parsed = parse_line(line) if line.startswith(":") else None
    return parsed is not None and parsed[0] == ":" and _find(parsed[1], ctx) is not None


def dispatch(line: str, ctx: ChatContext) -> bool:
    """Run the command in `line` ("/name arg..." or ":name arg..."); True when the chat should end."""
    parsed = parse_line(line)
    if parsed is None:
        ctx.console.print(f"not a command: {line.strip()[:40]!r}; commands look like /help or /plan GOAL "
                          "(to send a message that starts with /, start the line with a space)",
                          style="yellow", markup=False, soft_wrap=soft(ctx.console))
        return False
    prefix, name, arg = parsed
    command = _find(name, ctx)
    if command is None:
        _unknown(prefix, name, ctx)
        return False
    return bool(command.handler(ctx, arg))


def _find(name: str, ctx: ChatContext) -> SlashCommand | None:
    command = builtins().get(name)
    if command is not None:
        return command
    return next((c for c in all_commands(ctx) if c.name == name), None)


def _unknown(prefix: str, name: str, ctx: ChatContext) -> None:
    near = suggest(name, [c.name for c in all_commands(ctx)])
    hint = f"did you mean {prefix}{near}? " if near else ""
    ctx.console.print(f"unknown command {prefix}{name}; {hint}type /help for the list", style="yellow",
                      markup=False)


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    _register_modules(_REGISTRY)


def _register_modules(registry: Registry) -> None:
    register = register_into(registry)
    for dotted in SLASH_MODULES:
        importlib.import_module(dotted).register_slash_commands(register)
