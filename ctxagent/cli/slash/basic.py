"""`/help` (every registered and custom command) and `/exit` (`/quit`)."""

from __future__ import annotations

from typing import Any, Callable

from rich.markup import escape

from ctxagent.cli.slash.context import ChatContext

KEYS = "Esc+Enter or a trailing \\ adds a line; Ctrl-C cancels a turn; Ctrl-D exits. :name works like /name."


def _help(ctx: ChatContext, arg: str) -> None:
    from ctxagent.cli.slash import all_commands

    commands = all_commands(ctx)
    width = min(28, max(len(c.usage) for c in commands))
    for command in commands:
        where = "" if command.source == "built-in" else f" [dim]({escape(command.source)})[/]"
        ctx.console.print(f"  {escape(command.usage):<{width}} {escape(command.description)}{where}",
                          soft_wrap=True)
    ctx.console.print(f"  {escape(KEYS)}")


def _exit(ctx: ChatContext, arg: str) -> bool:
    return True


def register_slash_commands(register: Callable[..., Any]) -> None:
    """Register /help, /exit and /quit."""
    register("help", "list the commands (built-in, then your Markdown commands)", _help)
    register("exit", "leave the chat (also Ctrl-D)", _exit)
    register("quit", "same as /exit", _exit)
