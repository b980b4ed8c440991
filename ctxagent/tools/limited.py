"""The terminal within a limit: commands matching Claude Code's `Bash(pattern)` rules, and/or
any command on the read-only path. A custom command's `allowed-tools` (ctxagent.cli.slash)
and a sub-agent's `disallowedTools: Bash` (ctxagent.agent.subagents) use it; `restrict`
puts the same limit around a sub-agent's own terminal. Pattern rules: docs/slash-commands.md."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

from ctxagent.errors import CtxAgentError
from ctxagent.exec.gate import Gate
from ctxagent.shell.parse import parse_pipeline
from ctxagent.tools.base import ToolResult

COMMAND_RULES = "this command's allowed-tools"
"""Who set a LimitedTerminal's limit, as its refusals say it (the default: a custom command)."""


@dataclass
class TerminalLimit:
    """What the terminal may run: commands matching `patterns` (any path), and any command on
    the read-only path when `reading` (a Read/Grep/Glob/LS rule)."""

    patterns: list[str] = field(default_factory=list)
    reading: bool = False

    def describe(self) -> str:
        parts = ([", ".join(self.patterns)] if self.patterns else []) + (["read-only commands"] if self.reading else [])
        return " and ".join(parts)

    def allows(self, args: dict[str, Any]) -> bool:
        """Whether the terminal call `args` ({"command", "allow_dangerous"}) is within the limit."""
        return command_allowed(str(args.get("command", "")), self.patterns) or (
            self.reading and not args.get("allow_dangerous"))


def command_allowed(command: str, patterns: list[str]) -> bool:
    """True when every `|` stage of `command` matches one of `patterns` (see the module doc)."""
    try:
        stages = [" ".join(w.text for w in stage) for stage in parse_pipeline(command.strip())]
    except CtxAgentError:
        return False
    return bool(stages) and all(any(_matches(stage, p) for p in patterns) for stage in stages)


def _matches(command: str, pattern: str) -> bool:
    if pattern.endswith(":*"):
        prefix = pattern[:-2].rstrip()
        return command == prefix or command.startswith(prefix + " ")
    return fnmatch.fnmatchcase(command, pattern)


class LimitedTerminal:
    """The terminal tool within a TerminalLimit; anything else is refused before any approval
    question, saying what is allowed and `source` (who set the limit). Every other attribute
    is the wrapped tool's."""

    def __init__(self, terminal: Any, limit: TerminalLimit, source: str = COMMAND_RULES) -> None:
        self.inner = terminal
        self.limit = limit
        self.source = source
        self.name = terminal.name
        self.description = f"{terminal.description} Here only: {limit.describe()} ({source})."

    def schema(self) -> dict[str, Any]:
        schema = self.inner.schema()
        return {**schema, "function": {**schema["function"], "description": self.description}}

    def restrict(self, tool: Any) -> LimitedTerminal:
        """`tool` (another agent's terminal, a sub-agent's) within this same limit."""
        return LimitedTerminal(tool, self.limit, self.source)

    def gate(self, args: dict[str, Any]) -> Gate | None:
        """A refusing Gate for a call outside the limit (so nobody is asked), else the terminal's gate."""
        args = args if isinstance(args, dict) else {}
        if not self.limit.allows(args):
            return Gate(self.name, str(args.get("command", "")), "bash", refusal=self._refusal(args))
        inner = getattr(self.inner, "gate", None)
        return inner(args) if callable(inner) else None

    def execute(self, args: dict[str, Any] | None) -> ToolResult:
        args = args if isinstance(args, dict) else {}
        if self.limit.allows(args):
            return self.inner.execute(args)
        return ToolResult(ok=False, content=self._refusal(args))

    def _refusal(self, args: dict[str, Any]) -> str:
        return (f"terminal: `{args.get('command', '')}` is not allowed by {self.source}; "
                f"allowed: {self.limit.describe()}")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
