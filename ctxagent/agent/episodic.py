"""The episodic memory of a turn: what was asked, how it ended, which files changed.

`EpisodeRecorder`, an event sink, adds one `episodic` memory at `TurnEnd` (issue 3),
rendered from `prompts/episode.md`; `open_agent` adds it when `[agent] episodic_memory`
is on. Details: docs/memory-rag.md ("Module notes").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ctxagent.agent.events import Event, ToolCallEvent, ToolResultEvent, TurnEnd, TurnStart
from ctxagent.agent.prompts import render
from ctxagent.redaction import redact

#: Importance of an episode (0..1): above the memory layer's 0.3 floor
#: (`ctxagent.agent.wiring.MEMORY_MIN_IMPORTANCE`), so relevant episodes come back.
IMPORTANCE = 0.5
#: Characters kept of the task's and the answer's first lines.
LINE_CHARS = 200
PATCH_TOOL = "apply_patch"


def first_line(text: str | None, limit: int = LINE_CHARS) -> str:
    """The first non-empty line of `text`, cut to `limit` characters (marked with "...")."""
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 3].rstrip() + "..."


def patch_paths(arguments: str) -> list[str]:
    """Paths an `apply_patch` call's raw arguments touch (renames give both), in order;
    [] when the arguments or the patch do not parse."""
    from ctxagent.patch import parse_patch

    try:
        patch = parse_patch(json.loads(arguments).get("patch"))
    except Exception:  # the tool already reported the bad patch; nothing was changed
        return []
    paths: list[str] = []
    for op in patch.ops:
        paths += [p for p in (op.path, getattr(op, "move_to", None)) if p and p not in paths]
    return paths


@dataclass
class EpisodeRecorder:
    """Sink writing one episodic memory per turn through `memory` (a MemoryTool:
    `run({"action": "add", ...})`). `session_id` goes into the memory's metadata;
    `secrets` (API keys) and secret-looking strings are scrubbed from the text."""

    memory: Any
    session_id: str | None = None
    secrets: list[str] = field(default_factory=list, repr=False)
    task: str = ""
    turn: int = 0
    files: list[str] = field(default_factory=list)
    patches: dict[str, str] = field(default_factory=dict)

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnStart):
            self.task, self.turn, self.files, self.patches = event.task, event.turn, [], {}
        elif isinstance(event, ToolCallEvent) and event.name == PATCH_TOOL:
            self.patches[event.call_id] = event.arguments
        elif isinstance(event, ToolResultEvent) and event.name == PATCH_TOOL and event.ok:
            self.files += [p for p in patch_paths(self.patches.pop(event.call_id, "")) if p not in self.files]
        elif isinstance(event, TurnEnd) and event.steps > 0:
            self.memory.run(self.memory_args(event))

    def memory_args(self, end: TurnEnd) -> dict[str, Any]:
        """The memory tool's `add` arguments for the turn ending with `end`."""
        content = redact(render("episode", task=first_line(self.task), outcome=outcome(end), files=self.files,
                               tokens=end.tokens, cost_usd=end.cost_usd), self.secrets)
        meta = {"event_type": "task", "turn": self.turn, "reason": end.reason, "files": list(self.files),
                "tokens": end.tokens}
        if self.session_id:
            meta["session_id"] = self.session_id
        return {"action": "add", "content": content, "memory_type": "episodic", "importance": IMPORTANCE,
                "metadata": meta}


def outcome(end: TurnEnd) -> str:
    """One line: "finished: <answer's first line>" or "<reason>: <why it stopped>"."""
    detail = first_line(end.answer if end.reason == "finished" else end.message)
    return f"{end.reason}: {detail}" if detail else end.reason
