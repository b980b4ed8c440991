"""Slash commands of `ctxagent chat`: /help, /exit, /usage, /compact, /context (and
/permissions from `ctxagent.cli.permissions_chat`).

A command is `handler(ctx, arg) -> bool | None` (True ends the chat), registered by
name with `register_slash`. Other parts of ctxagent add or replace commands from their
own module: list it in `SLASH_MODULES`; it exposes `register_slash_commands(register)`
and calls `register(name, help, handler)`. The built-in /compact and /context are
simple defaults for that purpose (the context engine provides richer ones).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from rich.console import Console
from rich.markup import escape

from ctxagent.cli.render import usage_totals
from ctxagent.storage.files import read_jsonl

if TYPE_CHECKING:
    from ctxagent.agent.loop import Agent

#: Modules exposing `register_slash_commands(register)`; imported on first use.
SLASH_MODULES: tuple[str, ...] = ("ctxagent.cli.context_chat", "ctxagent.cli.permissions_chat",
                                 "ctxagent.cli.checkpoints_chat")


@dataclass
class ChatContext:
    """What a slash command can use: the agent (session, settings, assembler) and the console."""

    agent: "Agent"
    console: Console


Handler = Callable[[ChatContext, str], "bool | None"]
_COMMANDS: dict[str, tuple[str, Handler]] = {}
_loaded = False


def register_slash(name: str, help_text: str, handler: Handler) -> None:
    """Add or replace `/name`; `help_text` is its one line in /help."""
    _COMMANDS[name.lstrip("/")] = (help_text, handler)


def dispatch(line: str, ctx: ChatContext) -> bool:
    """Run the slash command in `line` ("/name arg..."); True when the chat should end."""
    _load()
    name, _, arg = line.strip()[1:].partition(" ")
    entry = _COMMANDS.get(name)
    if entry is None:
        ctx.console.print(f"[yellow]unknown command /{escape(name)}[/]; type /help")
        return False
    return bool(entry[1](ctx, arg.strip()))


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for dotted in SLASH_MODULES:
        importlib.import_module(dotted).register_slash_commands(register_slash)


def _help(ctx: ChatContext, arg: str) -> None:
    for name, (text, _handler) in sorted(_COMMANDS.items()):
        ctx.console.print(f"  /{name:<10} {escape(text)}")
    ctx.console.print("  Esc+Enter or a trailing \\ adds a line; Ctrl-C cancels a turn; Ctrl-D exits.")


def _exit(ctx: ChatContext, arg: str) -> bool:
    return True


def _usage(ctx: ChatContext, arg: str) -> None:
    records = read_jsonl(ctx.agent.session.path) if ctx.agent.session.path.exists() else []
    total = usage_totals([r["usage"] for r in records if r.get("kind") == "message" and isinstance(r.get("usage"), dict)])
    cost = f" · ${total['cost_usd']:.4f}" if total["cost_usd"] is not None else ""
    ctx.console.print(f"session {ctx.agent.session.id}: {ctx.agent.session.turns} turns · prompt "
                      f"{total['prompt_tokens']:,} (cached {total['cached_tokens']:,}) · completion "
                      f"{total['completion_tokens']:,} tokens{cost}")


def _compact(ctx: ChatContext, arg: str) -> None:
    ctx.agent.compact("requested with /compact", manual=True, focus=arg or None)  # the renderer shows its event


def _context(ctx: ChatContext, arg: str) -> None:
    from ctxagent.text.tokens import TokenCounter

    messages = [{"role": "system", "content": ctx.agent.system}, *ctx.agent.session.history]
    counter = TokenCounter(ctx.agent.settings.model.model)
    tokens = counter.count_messages(messages, ctx.agent.registry.schemas())
    window = ctx.agent.settings.model.context_window
    ctx.console.print(f"{len(messages)} messages · about {tokens:,} tokens of a {window:,}-token window")


def _defaults() -> dict[str, tuple[str, Any]]:
    return {"help": ("show the commands", _help), "exit": ("leave the chat (also Ctrl-D)", _exit),
            "quit": ("same as /exit", _exit), "usage": ("token use and cost of this session", _usage),
            "compact": ("compact the conversation now (/compact [what to keep])", _compact),
            "context": ("size of the conversation against the context window", _context)}


_COMMANDS.update(_defaults())
