"""`/help` (every registered and custom command) and `/exit` (`/quit`)."""

from __future__ import annotations

from typing import Any, Callable

from rich.markup import escape
from rich.padding import Padding
from rich.table import Table

from ctxagent.cli.slash.context import ChatContext
from ctxagent.cli.wrap import soft

KEYS = "Esc+Enter or a trailing \\ adds a line; Ctrl-C cancels a turn; Ctrl-D exits. :name works like /name."


def _help(ctx: ChatContext, arg: str) -> None:
    from ctxagent.cli.slash import all_commands

    commands = all_commands(ctx)
    width = min(28, max(len(c.usage) for c in commands))
    # on a terminal a description wraps at words under itself; elsewhere each command is one whole line
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True, min_width=width)
    table.add_column(overflow="fold", ratio=1)
    for command in commands:
        where = "" if command.source == "built-in" else f" [dim]({escape(command.source)})[/]"
        if ctx.console.is_terminal:
            table.add_row(escape(command.usage), escape(command.description) + where)
        else:
            pad = " " * (width - len(command.usage))  # counted on the text, not on its escaped markup
            ctx.console.print(f"  {escape(command.usage)}{pad} {escape(command.description)}{where}", soft_wrap=True)
    if table.rows:
        ctx.console.print(Padding(table, (0, 0, 0, 2)))
    ctx.console.print(f"  {escape(KEYS)}", soft_wrap=soft(ctx.console))


def _exit(ctx: ChatContext, arg: str) -> bool:
    return True


def register_slash_commands(register: Callable[..., Any]) -> None:
    """Register /help, /exit and /quit."""
    register("help", "list the commands (built-in, then your Markdown commands)", _help)
    register("exit", "leave the chat (also Ctrl-D)", _exit)
    register("quit", "same as /exit", _exit)
