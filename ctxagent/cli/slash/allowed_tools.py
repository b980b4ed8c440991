"""Claude Code's `allowed-tools` rules mapped onto ctxagent's tools, for one command's turn.

A rule is a tool name with an optional pattern (`Bash(git diff:*)`); CLAUDE_TOOLS maps
Claude Code's names onto ours; the terminal's limit is `ctxagent.tools.limited`. Matching
rules: docs/slash-commands.md ("`allowed-tools`").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ctxagent.tools.limited import LimitedTerminal, TerminalLimit, command_allowed

__all__ = ["CLAUDE_TOOLS", "READING", "LimitedTerminal", "TerminalLimit", "ToolGrant", "command_allowed", "grant_for",
           "offered_tools"]

#: Claude Code tool name -> the ctxagent tools it stands for (those the agent has are offered).
CLAUDE_TOOLS: dict[str, tuple[str, ...]] = {
    "Bash": ("terminal",), "Read": ("terminal", "context_fetch"), "Grep": ("terminal", "context_fetch"),
    "Glob": ("terminal", "context_fetch"), "LS": ("terminal",), "Edit": ("apply_patch",),
    "MultiEdit": ("apply_patch",), "Write": ("apply_patch",), "NotebookEdit": ("apply_patch",),
    "TodoWrite": ("todo",), "TodoRead": ("todo",),
}
#: Claude Code names that only read: through them the terminal keeps to its read-only path.
READING = frozenset({"Read", "Grep", "Glob", "LS"})
_RULE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)


@dataclass
class ToolGrant:
    """What a command's rules grant: tool name -> None (the whole tool) or, for the terminal, a
    TerminalLimit; `unknown`: rules that grant nothing (shown to the user)."""

    tools: dict[str, TerminalLimit | None] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)

    def add(self, name: str, rule_name: str, pattern: str | None) -> None:
        if name in self.tools and self.tools[name] is None:
            return
        if name != "terminal" or (rule_name == "Bash" and pattern is None):
            self.tools[name] = None
            return
        limit = self.tools.setdefault(name, TerminalLimit())
        if rule_name == "Bash" and pattern is not None:
            limit.patterns.append(pattern.strip())  # type: ignore[union-attr]
        else:
            limit.reading = True  # type: ignore[union-attr]


def grant_for(rules: list[str], available: list[str]) -> ToolGrant:
    """The ToolGrant of `rules` (Claude Code's form) among the tools the agent has (`available`)."""
    grant = ToolGrant()
    for rule in rules:
        match = _RULE.match(rule)
        if match is None:
            grant.unknown.append(f"{rule} (not of the form Name or Name(pattern))")
            continue
        name, pattern = match.group(1), match.group(2)
        targets = CLAUDE_TOOLS.get(name, (name,) if name in available else ())
        offered = [t for t in targets if t in available]
        if not offered:
            why = "this agent does not have it" if targets else "no ctxagent tool does this"
            grant.unknown.append(f"{rule} ({why})")
            continue
        for tool in offered:
            grant.add(tool, name if name in CLAUDE_TOOLS else "Bash", pattern)
    return grant


def offered_tools(grant: ToolGrant, registry: Any) -> dict[str, Any]:
    """name -> the tool to offer in its place (a LimitedTerminal) or None (the tool itself)."""
    out: dict[str, Any] = {}
    for name, limit in grant.tools.items():
        tool = registry.get(name)
        out[name] = LimitedTerminal(tool, limit) if limit is not None and tool is not None else None
    return out
