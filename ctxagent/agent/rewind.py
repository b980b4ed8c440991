"""The conversation half of `/rewind`: a session's history as it was when a turn began.

The transcript is replayed up to that turn's `turn_start` event (`history_from_records`,
so compactions before it count), and the session goes on from there: a `history` record
is appended, so a resumed session resumes rewound. The later records stay in the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxagent.agent.session import Session, find_transcript, history_from_records
from ctxagent.errors import NotFoundError
from ctxagent.storage.files import read_jsonl


def turn_tasks(path: Path) -> dict[int, str]:
    """turn number -> the user's request that started it, from transcript `path`."""
    out: dict[int, str] = {}
    for record in read_jsonl(path) if path.is_file() else []:
        event = record.get("event") if record.get("kind") == "event" else None
        if isinstance(event, dict) and event.get("type") == "turn_start" and isinstance(event.get("turn"), int):
            out[event["turn"]] = str(event.get("task", ""))
    return out


def history_before_turn(records: list[dict[str, Any]], turn: int) -> list[dict[str, Any]]:
    """The history just before turn `turn` started. Raises NotFoundError when the
    transcript has no such turn."""
    for i, record in enumerate(records):
        event = record.get("event") if record.get("kind") == "event" else None
        if isinstance(event, dict) and event.get("type") == "turn_start" and event.get("turn") == turn:
            return history_from_records(records[:i])
    raise NotFoundError(f"the session transcript has no turn {turn}; list the turns with /rewind")


def rewind_session(session: Session, turn: int) -> int:
    """Set `session`'s history to what it was before turn `turn` (recorded); returns how
    many messages were dropped. Raises NotFoundError."""
    history = history_before_turn(read_jsonl(session.path), turn)
    dropped = len(session.history) - len(history)
    session.replace_history(history)
    session.compaction_view = None
    return dropped


def rewind_transcript(repo: Path, session_id: str, turn: int) -> int:
    """`rewind_session` on a session that is not open (`ctxagent checkpoints --restore`).
    Raises NotFoundError (no such session or turn)."""
    path = find_transcript(Path(repo), session_id)
    records = read_jsonl(path)
    session = Session(id=path.stem, repo=Path(repo).resolve(), history=history_from_records(records))
    return rewind_session(session, turn)
