"""`ChatContext`: what a slash command can use (the agent, the console, a way to run a turn)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from rich.console import Console

if TYPE_CHECKING:
    from ctxagent.agent.loop import Agent


@dataclass
class ChatContext:
    """The agent (session, settings, assembler), the console, and `send(text)`, which runs
    one turn the way the REPL does (the chat passes its own; default `agent.run_turn`).
    `warned` holds the warnings already shown this session (each is shown once)."""

    agent: "Agent"
    console: Console
    send: Callable[[str], Any] | None = None
    warned: set[str] = field(default_factory=set)

    @property
    def repo(self) -> Path:
        """The session's repository root."""
        return Path(self.agent.session.repo)

    def run_turn(self, text: str) -> Any:
        """Run one turn with `text` as the user's message."""
        return (self.send or self.agent.run_turn)(text)

    def warn_once(self, text: str) -> None:
        """Print `text` as a yellow `warning:` line, unless it was printed before."""
        if text in self.warned:
            return
        self.warned.add(text)
        self.console.print(f"warning: {text}", style="yellow", markup=False, soft_wrap=True)
