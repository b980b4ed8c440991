"""The harness's system layer for an agent, and the hook that adds nested AGENTS.md files.

`open_layer(repo, settings)` loads profile files, the AGENTS.md chain and skills
(`ctxagent.harness.layer`), warning once per cut; `NestedRules`, a sink, adds an AGENTS.md
below the workspace when a tool call first touches its folder (docs/harness.md).
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

from ctxagent.agent.events import ToolCallEvent, ToolResultEvent
from ctxagent.agent.prompts import system_prompt
from ctxagent.config.settings import Settings, user_config_path
from ctxagent.harness.layer import HarnessOptions, SystemLayer, build_system_layer
from ctxagent.harness.nested import NestedRules as Tracker
from ctxagent.harness.nested import paths_in

#: Tools whose calls read files; their arguments (and context_fetch's result) name the paths.
READERS = frozenset({"terminal", "context_fetch", "apply_patch"})


def harness_options(settings: Settings) -> HarnessOptions:
    """The harness's folders (the user config folder, HOME) and limits from `settings`."""
    harness, model = settings.harness, settings.model
    return HarnessOptions(user_dir=user_config_path().parent, home=Path(os.environ.get("HOME") or Path.home()),
                          fallbacks=tuple(harness.fallback_names), agents_max_bytes=harness.agents_max_bytes,
                          profile_max_bytes=harness.profile_max_bytes, context_window=model.context_window)


def open_layer(repo: Path, settings: Settings, cwd: Path | None = None) -> SystemLayer:
    """The system layer for `repo` (`cwd`: the user's working directory, for the AGENTS.md chain);
    each of its warnings is issued once as a UserWarning."""
    layer = build_system_layer(repo, harness_options(settings), cwd=cwd)
    for message in layer.all_warnings():
        warnings.warn(message, stacklevel=2)
    return layer


class NestedRules:
    """A sink for `agent` (an Agent) and its `layer`: see the module doc."""

    def __init__(self, agent: Any, layer: SystemLayer, settings: Settings) -> None:
        self.agent, self.layer = agent, layer
        options = harness_options(settings)
        self.tracker = Tracker(layer.repo, layer.chain, fallbacks=options.fallbacks, home=options.home)
        self.calls: dict[str, str] = {}

    def on_event(self, event: Any) -> None:
        if isinstance(event, ToolCallEvent) and event.name in READERS:
            self.calls[event.call_id] = event.arguments or ""
        elif isinstance(event, ToolResultEvent) and event.call_id in self.calls:
            text = self.calls.pop(event.call_id)
            words = paths_in(text)
            if event.name == "terminal":  # `ls pkg`, `cd pkg`: plain words name folders too
                words += _command_words(text)
            if event.name == "context_fetch" and event.ok:
                words += paths_in(event.content or "")
            self.see(words)

    def see(self, paths: list[str]) -> list:
        """Load the nested files `paths` lead to; re-render the system prompt when any were new."""
        new = self.tracker.see(paths)
        if new:
            self.agent.system = system_prompt(self.layer.repo, self.agent.registry.names(), self.layer)
        return new


def _command_words(arguments: str) -> list[str]:
    """The words of a terminal call's `command` (none when the arguments are not JSON)."""
    try:
        command = json.loads(arguments).get("command", "")
    except (ValueError, AttributeError):
        return []
    return [w for w in str(command).split() if not w.startswith("-")][:100]
