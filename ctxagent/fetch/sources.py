"""The notes, memory and test-artifact sources of context_fetch.

Each returns plain rows, or raises `SourceUnavailable` (with the reason shown to the
model) when its part of ctxagent is not installed or its store cannot be read. A store
that does not exist yet (no notes taken, no memory written) is available and empty:
nothing is created by looking.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxagent.errors import CtxAgentError
from ctxagent.fetch import tests_artifacts
from ctxagent.storage.files import state_dir


class SourceUnavailable(Exception):
    """A source cannot answer; `str(exc)` says why (shown in the result's `unavailable`)."""


def search_notes(root: Path, query: str, limit: int) -> list[dict[str, Any]]:
    """Notes in `<root>/.ctxagent/notes` matching `query`, best first (the note search
    rows: note_id, title, type, tags, content, updated_at, score), read through the store."""
    folder = _state(root) / "notes"
    try:
        from ctxagent.notes.store import NoteStore
    except ImportError as exc:
        raise SourceUnavailable(f"notes are not available in this install ({exc})") from None
    if not folder.is_dir():
        return []
    try:
        return [{**note.as_item(), "score": round(score, 4)} for note, score in NoteStore(folder).search(query, limit=limit)]
    except CtxAgentError as exc:
        raise SourceUnavailable(f"notes could not be searched: {exc}") from None


def search_memory(root: Path, query: str, limit: int) -> list[dict[str, Any]]:
    """Memories in `<root>/.ctxagent/memory.db` matching `query`, best first (rows: id,
    content, memory_type, importance, timestamp, ..., score)."""
    db = _state(root) / "memory.db"
    try:
        from ctxagent.memory.store import MemoryStore
    except ImportError as exc:
        raise SourceUnavailable(f"memory is not available in this install ({exc})") from None
    if not db.is_file():
        return []
    try:
        with MemoryStore(db) as store:
            return [item.to_dict(score) for item, score in store.search(query, limit=limit)]
    except CtxAgentError as exc:
        raise SourceUnavailable(f"memory could not be searched: {exc}") from None


def _state(root: Path) -> Path:
    """`<root>/.ctxagent`, or SourceUnavailable when it is refused (a symbolic link...)."""
    try:
        return state_dir(root)
    except CtxAgentError as exc:
        raise SourceUnavailable(str(exc)) from None


def collect_test_artifacts(root: Path) -> dict[str, Any]:
    """{"last_failed": {...}, "junit": [...]} (see `ctxagent.fetch.tests_artifacts`)."""
    return tests_artifacts.collect(root)
