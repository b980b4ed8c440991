"""The episodic memory of a turn that did something: what was asked, how it ended, what changed.

`EpisodeRecorder`, an event sink, adds one `episodic` memory at `TurnEnd` (rendered from
`prompts/episode.md`) only for a turn that changed files or found something; never for an
interrupted, failed or trivial turn (issue 15 item 4). Changed files' digests before and
after go in its metadata (`ctxagent.memory.stale`). Details: docs/memory-rag.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxagent.agent.events import Event, ToolCallEvent, ToolResultEvent, TurnEnd, TurnStart
from ctxagent.agent.prompts import render
from ctxagent.memory.stale import file_digest
from ctxagent.redaction import redact

#: Importance of an episode (0..1): above the memory layer's 0.3 floor
#: (`ctxagent.agent.wiring.MEMORY_MIN_IMPORTANCE`), so relevant episodes come back.
IMPORTANCE = 0.5
#: Characters kept of the task's and the answer's first lines.
LINE_CHARS = 200
PATCH_TOOL = "apply_patch"
#: Tools whose successful call alone is no finding: they keep the agent's own state.
BOOKKEEPING_TOOLS = frozenset({"todo", "memory", "memory_file", "plan"})
#: Turn ends that never leave a memory: the user stopped the turn, or it failed.
NO_MEMORY_REASONS = frozenset({"interrupted", "error"})


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
    """Sink writing one episodic memory per turn worth it through `memory` (a MemoryTool:
    `run({"action": "add", ...})`). `session_id` goes into the memory's metadata, `repo`
    (the workspace) roots the changed files' digests; `secrets` are scrubbed from the text."""

    memory: Any
    session_id: str | None = None
    secrets: list[str] = field(default_factory=list, repr=False)
    repo: Path | None = None
    task: str = ""
    turn: int = 0
    files: list[str] = field(default_factory=list)
    patches: dict[str, str] = field(default_factory=dict)
    before: dict[str, str | None] = field(default_factory=dict)
    found: int = 0  # successful calls of tools that look or act

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnStart):
            self.task, self.turn, self.files, self.patches, self.before, self.found = event.task, event.turn, [], {}, {}, 0
        elif isinstance(event, ToolCallEvent) and event.name == PATCH_TOOL:
            self.patches[event.call_id] = event.arguments
            for path in patch_paths(event.arguments):  # before the tool runs: the content it changes
                self.before.setdefault(path, self._digest(path))
        elif isinstance(event, ToolResultEvent) and event.ok:
            self.found += event.name not in BOOKKEEPING_TOOLS
            if event.name == PATCH_TOOL:
                self.files += [p for p in patch_paths(self.patches.pop(event.call_id, "")) if p not in self.files]
        elif isinstance(event, TurnEnd) and worth_remembering(event, self.files, self.found):
            self.memory.run(self.memory_args(event))

    def _digest(self, path: str) -> str | None:
        return file_digest(self.repo / path) if self.repo is not None else None

    def memory_args(self, end: TurnEnd) -> dict[str, Any]:
        """The memory tool's `add` arguments for the turn ending with `end`."""
        content = redact(render("episode", task=first_line(self.task), outcome=outcome(end), files=self.files,
                               tokens=end.tokens, cost_usd=end.cost_usd), self.secrets)
        meta = {"event_type": "task", "turn": self.turn, "reason": end.reason, "files": list(self.files),
                "tokens": end.tokens}
        if self.session_id:
            meta["session_id"] = self.session_id
        if self.repo is not None and self.files:
            meta["file_state"] = {p: {"before": self.before.get(p), "after": self._digest(p)} for p in self.files}
        return {"action": "add", "content": content, "memory_type": "episodic", "importance": IMPORTANCE,
                "metadata": meta}


def worth_remembering(end: TurnEnd, files: list[str], found: int) -> bool:
    """Whether a turn ending with `end` leaves a memory: not interrupted or failed, and it
    changed `files` or found something (`found` calls that looked or acted, and an answer)."""
    if end.reason in NO_MEMORY_REASONS or end.steps == 0:
        return False
    return bool(files) or (end.reason == "finished" and found > 0 and bool(first_line(end.answer)))


def outcome(end: TurnEnd) -> str:
    """One line: "finished: <answer's first line>" or "<reason>: <why it stopped>"."""
    detail = first_line(end.answer if end.reason == "finished" else end.message)
    return f"{end.reason}: {detail}" if detail else end.reason
