"""One note file on disk: its path, reading it (tolerating human edits) and writing it.

Files are written atomically (`ctxagent.storage.files.atomic_write_bytes`) as bytes, and read
as bytes, so a body keeps its exact line endings. Reading is lenient about what a
person may have typed (a missing field, tags as `a, b`, an unknown type) and strict
about structure (no front matter -> StorageError).
"""

from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from ctxagent.errors import StorageError, ToolRefusedError
from ctxagent.notes import frontmatter
from ctxagent.notes.model import Note, check_note_id
from ctxagent.storage.files import atomic_write_bytes

SUFFIX = ".md"


def note_path(folder: Path, note_id: str) -> Path:
    """`<folder>/<note_id>.md` after checking the id (ToolInputError if malformed).

    Raises ToolRefusedError if the result would not sit directly inside `folder`
    (defence in depth; the id pattern already rules this out).
    """
    check_note_id(note_id)
    path = folder / f"{note_id}{SUFFIX}"
    if path.parent != folder or path.name != f"{note_id}{SUFFIX}":
        raise ToolRefusedError(f"note id {note_id!r} does not name a file in the notes folder")
    return path


def write_note(path: Path, note: Note) -> os.stat_result:
    """Write `note` atomically to `path`; return the new file's stat (for the index)."""
    text = frontmatter.render(note.metadata(), note.content)
    atomic_write_bytes(path, text.encode("utf-8"))
    return path.stat()


def read_note(path: Path, note_id: str) -> Note:
    """Parse the note file at `path`. The file name is the id, whatever the front matter says.

    Raises StorageError when the file is unreadable or its front matter malformed.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise StorageError(f"cannot read note {note_id}: {exc.strerror or exc}") from None
    text = raw.decode("utf-8", errors="replace")
    meta, body = frontmatter.parse(text, source=f"note file {path}")
    fallback_time = _mtime_iso(path)
    return Note(
        id=note_id,
        title=_text(meta.get("title"), note_id),
        type=_text(meta.get("type"), "general") or "general",
        tags=_tags(meta.get("tags")),
        created_at=_text(meta.get("created_at"), fallback_time),
        updated_at=_text(meta.get("updated_at"), fallback_time),
        content=body,
    )


def _text(value: Any, default: str) -> str:
    if isinstance(value, str):
        return value
    return default


def _tags(value: Any) -> list[str]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list):
        return []
    return [tag.strip() for tag in value if isinstance(tag, str) and tag.strip()]


def _mtime_iso(path: Path) -> str:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime).astimezone().isoformat()
    except OSError:
        return ""


def scan(folder: Path) -> dict[str, os.stat_result]:
    """Note files in `folder`: {id: stat} for every `<id>.md` whose stem is a valid id.

    Hidden files (temporary files of interrupted writes start with '.') and other names
    are skipped.
    """
    found: dict[str, os.stat_result] = {}
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return found
    for entry in entries:
        name = entry.name
        if name.startswith(".") or not name.endswith(SUFFIX):
            continue
        stem = name[: -len(SUFFIX)]
        try:
            check_note_id(stem)
            if entry.is_file(follow_symlinks=False):
                found[stem] = entry.stat(follow_symlinks=False)
        except Exception:  # malformed stem or a file removed meanwhile
            continue
    return found


#: Temporary files of interrupted writes older than this (seconds) are removed.
STALE_TMP_S = 60.0


def sweep_stale_temp_files(folder: Path, prefix: str | tuple[str, ...] = ".", *,
                           min_age_s: float = STALE_TMP_S) -> int:
    """Remove `<prefix>*.tmp` files (`prefix`: one or a tuple) older than `min_age_s` seconds in
    `folder`; return how many. Call with the store's lock held (docs/notes-todo-plan.md,
    "Crash safety"): a writer killed mid-write leaves `.ctxtmp-<random>.tmp` behind."""
    removed = 0
    limit = time.time() - min_age_s
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(".tmp")):
            continue
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < limit:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed
