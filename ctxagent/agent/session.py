"""A session: its id, its history, and its transcript on disk.

Transcript: `<repo>/.ctxagent/sessions/<id>.jsonl`, one redacted JSON record a line
(meta, message, event, history, protocol, view), appended and fsynced. `resume` rebuilds
the history and the last compaction view. Record shapes: docs/state.md ("Module notes").
"""

from __future__ import annotations

import secrets as _secrets
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from ctxagent.agent.events import STREAMING_TYPES, Event
from ctxagent.context.messages import repair_pairing
from ctxagent.errors import NotFoundError
from ctxagent.redaction import redact
from ctxagent.storage.files import append_jsonl, ensure_state_dir, read_jsonl, refuse_link, state_dir
from ctxagent.storage.ids import resolve_id

__all__ = ["Session", "ensure_state_dir", "find_transcript", "history_from_records", "new_session_id",
           "sessions_dir", "view_from_records"]


def new_session_id(now: datetime | None = None) -> str:
    """`YYYYmmdd-HHMMSS-<4 hex>` in local time, e.g. `20260129-184501-a3f9`."""
    now = now or datetime.now()
    return f"{now:%Y%m%d-%H%M%S}-{_secrets.token_hex(2)}"


def sessions_dir(repo: Path) -> Path:
    """`<repo>/.ctxagent/sessions` (not created here)."""
    return state_dir(repo) / "sessions"


@dataclass
class Session:
    """One conversation with the agent.

    `history`: OpenAI messages without the system prompt (the loop adds a fresh one to every request);
    `turns`: user turns so far; `secrets`: strings redacted from every record; `compaction_view`: set by
    `resume`, see `view_from_records`; `protocol`: the protocol switched to (`record_protocol`), else None.
    """

    id: str
    repo: Path
    history: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0
    secrets: list[str] = field(default_factory=list, repr=False)
    compaction_view: dict[str, Any] | None = field(default=None, repr=False)
    protocol: str | None = None
    parent: str | None = None
    carry_cutoff: float | None = field(default=None, repr=False)
    """Todo items and notes changed before this (Unix s) are not injected (`ctxagent.agent.carryover`)."""

    @property
    def path(self) -> Path:
        """The transcript file (a sub-agent's: in its parent's folder, `sessions/<parent>/<id>.jsonl`)."""
        folder = sessions_dir(self.repo)
        return (folder / self.parent if self.parent else folder) / f"{self.id}.jsonl"

    @classmethod
    def child(cls, parent: "Session", child_id: str, *, meta: dict[str, Any] | None = None) -> "Session":
        """A sub-agent's session `child_id` under `parent` (not listed by `ctxagent sessions`, never
        resumed on its own); its meta record names the parent."""
        session = cls(id=child_id, repo=parent.repo, secrets=list(parent.secrets), parent=parent.id)
        session._append({"kind": "meta", "session_id": child_id, "parent": parent.id, "repo": str(parent.repo),
                         "resumed": False, **(meta or {})})
        return session

    @classmethod
    def create(cls, repo: Path, *, secrets: Iterable[str] = (), meta: dict[str, Any] | None = None) -> "Session":
        """Start a new session in `repo` and write its meta record. Never reuses an id.

        Raises StorageError when `<repo>/.ctxagent` is refused (`ctxagent.storage.files.ensure_state_dir`)."""
        repo = Path(repo).resolve()
        ensure_state_dir(repo)
        while True:
            session = cls(id=new_session_id(), repo=repo, secrets=list(secrets))
            if not session.path.exists():
                break
        session._append({"kind": "meta", "session_id": session.id, "repo": str(repo), "resumed": False, **(meta or {})})
        return session

    @classmethod
    def resume(cls, repo: Path, ref: str, *, secrets: Iterable[str] = (), meta: dict[str, Any] | None = None) -> "Session":
        """Reopen session `ref` (an id, or `last`). Raises NotFoundError listing how to find ids,
        StorageError when the state folder or the transcript is a symbolic link."""
        repo = Path(repo).resolve()
        ensure_state_dir(repo)
        path = find_transcript(repo, ref)
        refuse_link(path)  # a transcript shipped as a link must not be read or appended to
        records = read_jsonl(path)
        session = cls(id=path.stem, repo=repo, secrets=list(secrets))
        session.history = history_from_records(records)
        session.compaction_view = view_from_records(records)
        session.protocol = next((str(r["protocol"]) for r in reversed(records)
                                 if r.get("kind") == "protocol" and isinstance(r.get("protocol"), str)), None)
        session.turns = sum(1 for r in records if r.get("kind") == "event" and r["event"].get("type") == "turn_start")
        session._append({"kind": "meta", "session_id": session.id, "repo": str(repo), "resumed": True, **(meta or {})})
        return session

    def add_message(self, message: dict[str, Any], *, usage: dict[str, Any] | None = None) -> None:
        """Append `message` to the history and record it (with the call's usage, if any)."""
        self.history.append(message)
        self._append({"kind": "message", "message": message, "usage": usage})

    def replace_history(self, messages: list[dict[str, Any]]) -> None:
        """The loop keeps `messages` (system-free) as its history from now on: set it and
        record it, so `resume` goes on from it (the earlier messages stay in the transcript)."""
        self.history = list(messages)
        self._append({"kind": "history", "messages": self.history})

    def record_protocol(self, name: str, reason: str) -> None:
        """The session uses protocol `name` from now on (`reason`: why); a resume keeps it."""
        self.protocol = name
        self._append({"kind": "protocol", "protocol": name, "reason": reason})

    def record_view(self, view: dict[str, Any]) -> None:
        """Record the view an automatic compaction made of the history (the assembler's
        `on_view`), so a resumed session rebuilds it instead of compacting again."""
        self._append({"kind": "view", **view})

    def record_event(self, event: Event) -> None:
        """Record a non-streaming event; a sink, so it can be passed to the loop."""
        if event.type in STREAMING_TYPES:
            return
        self._append({"kind": "event", "event": event.to_dict()})

    def _append(self, record: dict[str, Any]) -> None:
        record = {"kind": record.pop("kind"), "ts": round(time.time(), 3), **record}
        append_jsonl(self.path, redact(record, self.secrets))


def history_from_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The repaired, system-free message history recorded in a transcript: the messages
    of its last history record (`Session.replace_history`), then every message after it."""
    start, messages = 0, []
    for i, record in enumerate(records):
        if record.get("kind") == "history" and isinstance(record.get("messages"), list):
            start, messages = i + 1, [m for m in record["messages"] if isinstance(m, dict)]
    messages += [r["message"] for r in records[start:] if r.get("kind") == "message" and isinstance(r.get("message"), dict)]
    return repair_pairing([m for m in messages if m.get("role") != "system"])


def view_from_records(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What a resumed session goes on from instead of compacting again: the last `view`
    record after the last `history` record; `{"missing": why}` when an automatic
    compaction event after that history record has no view record after it (a transcript
    written before view records, or an edited one); None when there was no automatic
    compaction since. Whether the view still matches the history is the assembler's to check."""
    view, compaction = None, None
    for record in records:
        kind = record.get("kind")
        if kind == "history" and isinstance(record.get("messages"), list):
            view, compaction = None, None
        elif kind == "view":
            view = record
        elif kind == "event" and isinstance(record.get("event"), dict) and record["event"].get("type") == "compaction":
            details = record["event"].get("details")
            if isinstance(details, dict) and details.get("trigger") == "auto":
                compaction, view = details, None
    if view is None and compaction is not None:
        turn = compaction.get("turn_id")
        return {"missing": f"the transcript has no view record for the automatic compaction of turn {turn}: "
                           "it was written by an older ctxagent, or edited"}
    return view


def find_transcript(repo: Path, ref: str) -> Path:
    """Path of session `ref` (id, unique id prefix, or `last`, the most recently written) in
    `repo`. Raises NotFoundError (an ambiguous prefix names its candidates)."""
    folder = sessions_dir(repo)
    files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    if ref == "last":
        if not files:
            raise NotFoundError(f"no sessions in {folder}; start one with `ctxagent chat`")
        return max(files, key=lambda p: (p.stat().st_mtime, p.name))
    missing = f"no session {ref!r} in {folder}; list them with `ctxagent sessions`"
    if not ref or "/" in ref or ref.startswith("."):
        raise NotFoundError(missing)
    ref = resolve_id(ref, [p.stem for p in files if p.is_file()], what="session",
                     listing=f"in {folder}; list them with `ctxagent sessions`")
    return folder / f"{ref}.jsonl"


@dataclass
class SessionSummary:
    """One row of `ctxagent sessions`: tokens = prompt + completion over all calls."""

    id: str
    started: str
    turns: int
    task: str
    tokens: int
    path: Path


def list_sessions(repo: Path) -> list[SessionSummary]:
    """Summaries of every session in `repo`, newest first."""
    folder = sessions_dir(repo)
    if not folder.is_dir():
        return []
    rows = [summarize(path) for path in folder.glob("*.jsonl")]
    return sorted(rows, key=lambda r: r.id, reverse=True)


def summarize(path: Path) -> SessionSummary:
    """Read one transcript into a `SessionSummary` (survives torn or odd records)."""
    records = read_jsonl(path)
    starts = [r["event"] for r in records if r.get("kind") == "event" and isinstance(r.get("event"), dict)
              and r["event"].get("type") == "turn_start"]
    tokens = 0
    for record in records:
        usage = record.get("usage") if record.get("kind") == "message" else None
        if isinstance(usage, dict):
            tokens += int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)
    first = str(starts[0].get("task", "")) if starts else ""
    started = datetime.fromtimestamp(records[0]["ts"]).strftime("%Y-%m-%d %H:%M") if records and "ts" in records[0] else "?"
    return SessionSummary(path.stem, started, len(starts), first.strip().splitlines()[0] if first.strip() else "", tokens, path)
