"""The slash-command registry: `SlashCommand` records by name, lookup and "did you mean".

A command is a name (`help`, `git:commit`), an argument hint (`GOAL`, `[FOCUS]`), a
one-line description and a handler `(ctx, arg) -> bool | None` (True ends the chat).
Built-in commands register here from their modules (`ctxagent.cli.slash.SLASH_MODULES`);
custom Markdown commands are found on disk at each use and never replace a built-in.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ctxagent.cli.slash.context import ChatContext

Handler = Callable[["ChatContext", str], "bool | None"]
#: What a command name may look like: letters, digits, `_`, `-`, and `:` between folder parts.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*(?::[A-Za-z0-9][A-Za-z0-9_.-]*)*")


@dataclass(frozen=True)
class SlashCommand:
    """One command: `name` without the slash, `args` hint ("" for none), `description`
    (one line for /help), `handler`, and `source` ("built-in", or the file it came from)."""

    name: str
    args: str
    description: str
    handler: Handler
    source: str = "built-in"

    @property
    def usage(self) -> str:
        """`/name ARGS`, as /help shows it."""
        return f"/{self.name} {self.args}".rstrip()


class Registry:
    """Commands by name, in registration order; registering a name again replaces it."""

    def __init__(self) -> None:
        self._commands: dict[str, SlashCommand] = {}

    def add(self, command: SlashCommand) -> None:
        """Add or replace `command`. Raises ValueError for a name NAME does not match."""
        if not NAME.fullmatch(command.name):
            raise ValueError(f"slash command name {command.name!r}: use letters, digits, '-', '_' and ':'")
        self._commands[command.name] = command

    def get(self, name: str) -> SlashCommand | None:
        return self._commands.get(name)

    def names(self) -> list[str]:
        return list(self._commands)

    def commands(self) -> list[SlashCommand]:
        return list(self._commands.values())


def suggest(name: str, names: list[str]) -> str | None:
    """The known name closest to `name` (difflib, cutoff 0.6), or None when none is close."""
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    if close:
        return close[0]
    prefixed = sorted(n for n in names if n.startswith(name)) if name else []
    return prefixed[0] if prefixed else None


def parse_line(line: str) -> tuple[str, str, str] | None:
    """`"/name rest"` or `":name rest"` -> (prefix, name, rest stripped); None when the line
    does not start with a prefix followed by a name."""
    text = line.strip()
    if len(text) < 2 or text[0] not in "/:":
        return None
    head, _, rest = text[1:].partition(" ")
    head, _, more = head.partition("\n")
    rest = f"{more}\n{rest}".strip() if more else rest.strip()
    if not NAME.fullmatch(head):
        return None
    return text[0], head, rest


def register_into(registry: Registry) -> Callable[..., Any]:
    """`register(name, help_text, handler, args="")` for modules' `register_slash_commands`."""

    def register(name: str, help_text: str, handler: Handler, args: str = "") -> None:
        registry.add(SlashCommand(name=name.lstrip("/:"), args=args, description=help_text, handler=handler))

    return register
