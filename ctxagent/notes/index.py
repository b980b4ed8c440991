"""`notes_index.json`: the metadata of every note, kept in step with the Markdown files.

The Markdown files are the truth; the index is a cache for fast list/summary. Each
entry records the file's mtime (ns) and size, so `sync` sees human edits, new files and
removed files, re-reads only what changed, and reports whether the index must be saved.
A missing, empty or corrupt index is rebuilt from the files with a warning (case S01b);
`ctxagent.storage.files.read_json_with_fallback` first sets a corrupt file aside and tries
the `.bak` copy, which `sync` then brings up to date.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

from ctxagent.errors import StorageError
from ctxagent.notes.cache import NoteCache
from ctxagent.notes.files import note_path, read_note, scan
from ctxagent.notes.model import Note
from ctxagent.storage.files import atomic_write_bytes, json_bytes, read_json_with_fallback, write_json_with_backup

INDEX_NAME = "notes_index.json"
INDEX_VERSION = 1

_ENTRY_KEYS = {"id": str, "title": str, "type": str, "tags": list, "created_at": str,
               "updated_at": str, "mtime_ns": int, "size": int}

Entries = dict[str, dict[str, Any]]


def entry_for(note: Note, stat: os.stat_result) -> dict[str, Any]:
    """The index entry of `note` whose file has `stat`."""
    entry = note.metadata()
    entry.update(file=f"{note.id}.md", mtime_ns=stat.st_mtime_ns, size=stat.st_size)
    return entry


def _validate(value: Any) -> Entries:
    if not isinstance(value, dict) or not isinstance(value.get("notes"), dict):
        raise ValueError("not a notes index (expected {\"version\": 1, \"notes\": {...}})")
    for note_id, entry in value["notes"].items():
        if not isinstance(entry, dict):
            raise ValueError(f"index entry {note_id!r} is not an object")
        for key, kind in _ENTRY_KEYS.items():
            if not isinstance(entry.get(key), kind):
                raise ValueError(f"index entry {note_id!r} has no valid {key!r}")
    return value["notes"]


def load(folder: Path) -> Entries | None:
    """Entries from `<folder>/notes_index.json` (or its `.bak`); None if neither is usable."""
    return read_json_with_fallback(folder / INDEX_NAME, lambda: None, validate=_validate)


def save(folder: Path, entries: Entries, *, backup: bool) -> None:
    """Write the index atomically; with `backup`, the previous good copy goes to `.bak`."""
    path = folder / INDEX_NAME
    value = {"version": INDEX_VERSION, "notes": entries}
    if backup:
        write_json_with_backup(path, value)
    else:
        atomic_write_bytes(path, json_bytes(value, indent=2) + b"\n")


def sync(folder: Path, entries: Entries | None, cache: NoteCache) -> tuple[Entries, bool]:
    """Bring `entries` in line with the files in `folder`; returns (entries, changed).
    Changed or new files are parsed (into `cache`), removed ones dropped; a file that no longer
    parses is left out with a warning (never touched). `entries` None: rebuilt from the files,
    with a warning when there were any."""
    on_disk = scan(folder)
    rebuilt = entries is None
    entries = dict(entries or {})
    changed = rebuilt and bool(on_disk)
    if changed:
        warnings.warn(f"{folder / INDEX_NAME} was missing or unreadable; rebuilt from "
                      f"{len(on_disk)} note files", stacklevel=3)
    for note_id, stat in on_disk.items():
        entry = entries.get(note_id)
        if entry and entry["mtime_ns"] == stat.st_mtime_ns and entry["size"] == stat.st_size:
            continue
        changed = True
        note = _read_or_warn(folder, note_id)
        if note is None:
            entries.pop(note_id, None)
            continue
        cache.put(str(note_path(folder, note_id)), stat.st_mtime_ns, stat.st_size, note)
        entries[note_id] = entry_for(note, stat)
    for note_id in [i for i in entries if i not in on_disk]:
        del entries[note_id]
        changed = True
    return entries, changed


def _read_or_warn(folder: Path, note_id: str) -> Note | None:
    try:
        return read_note(note_path(folder, note_id), note_id)
    except StorageError as exc:
        warnings.warn(f"skipping note {note_id}: {exc}", stacklevel=4)
        return None
