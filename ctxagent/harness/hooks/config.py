"""Hook configuration in Claude Code's shape: `{"EVENT": [{"matcher": "REGEX", "hooks":
[{"type": "command", "command": "...", "timeout": 60}]}]}`, from `hooks.json` files and
`[hooks]` tables. Plain data in (dicts, paths), `HookRule`s out; ConfigError names the file."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ctxagent.errors import ConfigError

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "Stop",
          "SubagentStop", "SessionEnd")
"""The events hooks can observe (Claude Code's names); docs/hooks.md says when each fires."""
DEFAULT_TIMEOUT_S = 60.0
"""Seconds a hook command may run (Claude Code's default), unless its `timeout` says otherwise."""
MAX_TIMEOUT_S = 3600.0


@dataclass(frozen=True)
class HookRule:
    """One command for one event. `matcher`: a regex matched whole against the event's subject
    (tool name, SessionStart source, PreCompact trigger); None matches all. `source`: the file."""

    event: str
    command: str
    timeout_s: float
    source: str
    matcher: str | None = None

    def matches(self, subject: str | None) -> bool:
        """True when this rule applies to `subject` (None: the event has no subject)."""
        if self.matcher is None or subject is None:
            return True
        return re.fullmatch(self.matcher, subject) is not None


def read_hooks_file(path: Path) -> list[HookRule]:
    """The rules of a `hooks.json` file (its top level: the events table, or `{"hooks": {...}}`
    as in Claude Code's settings.json); [] when it does not exist. Raises ConfigError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the hooks file {path}: {exc}; fix or remove it", setting=str(path)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno}); fix the file or move it away",
                          setting=str(path)) from None
    if isinstance(data, dict) and set(data) == {"hooks"}:
        data = data["hooks"]
    return parse_hooks(data, str(path))


def parse_hooks(table: Any, source: str) -> list[HookRule]:
    """The rules of one events table (see the module doc), checked. Raises ConfigError naming
    `source` and the entry when an event, matcher, type, command or timeout is wrong."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"{source}: hooks must be a table of events ({', '.join(EVENTS)})", setting="hooks")
    rules: list[HookRule] = []
    for event, groups in table.items():
        if event not in EVENTS:
            raise ConfigError(f"{source}: unknown hook event {event!r}; the events are {', '.join(EVENTS)}",
                              setting=f"hooks.{event}")
        if not isinstance(groups, list):
            raise ConfigError(f"{source}: hooks.{event} must be a list of {{matcher, hooks}} entries", setting=f"hooks.{event}")
        for i, group in enumerate(groups):
            rules += _group(event, group, f"{source}: hooks.{event}[{i}]", source)
    return rules


def _group(event: str, group: Any, where: str, source: str) -> list[HookRule]:
    if not isinstance(group, Mapping) or not isinstance(group.get("hooks"), list):
        raise ConfigError(f"{where} must be a table with a `hooks` list", setting=f"hooks.{event}")
    matcher = group.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        raise ConfigError(f"{where}: matcher must be a string (a regular expression)", setting=f"hooks.{event}")
    if matcher in ("", "*"):
        matcher = None  # Claude Code: empty or "*" matches every tool
    if matcher is not None:
        try:
            re.compile(matcher)
        except re.error as exc:
            raise ConfigError(f"{where}: matcher {matcher!r} is not a valid regular expression ({exc})",
                              setting=f"hooks.{event}") from None
    rules = []
    for j, hook in enumerate(group["hooks"]):
        rules.append(_command(event, hook, matcher, f"{where}.hooks[{j}]", source))
    return rules


def _command(event: str, hook: Any, matcher: str | None, where: str, source: str) -> HookRule:
    if not isinstance(hook, Mapping):
        raise ConfigError(f"{where} must be a table", setting=f"hooks.{event}")
    if hook.get("type", "command") != "command":
        raise ConfigError(f"{where}: type {hook.get('type')!r} is not supported; only \"command\" hooks run here",
                          setting=f"hooks.{event}")
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f"{where}: `command` must be a non-empty string", setting=f"hooks.{event}")
    timeout = hook.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT_S:
        raise ConfigError(f"{where}: timeout must be a number of seconds, above 0 and at most {MAX_TIMEOUT_S:.0f}",
                          setting=f"hooks.{event}")
    return HookRule(event=event, command=command, timeout_s=float(timeout), source=source, matcher=matcher)
