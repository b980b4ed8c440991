"""`NoteStore`: structured notes in a folder, one Markdown file each, plus an index.

The storage behind `NoteTool` and `ctxagent notes`. Every read-modify-write runs under
`ctxagent.storage.files.file_lock` on the index, so several sessions and processes can share
one folder; every file is written atomically, so a crash leaves the old or the new
note, never half of one (case S01). Search ranks with `ctxagent.text.scoring`
(BM25 over title, tags and body, Chinese included), the ranking used everywhere in
ctxagent.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable

from filelock import FileLock

from ctxagent.errors import NotFoundError, StorageError, ToolInputError, ToolRefusedError
from ctxagent.notes import index
from ctxagent.notes.cache import SHARED, NoteCache
from ctxagent.notes.files import note_path, read_note, sweep_stale_temp_files, write_note
from ctxagent.notes.model import (
    Note,
    check_text,
    check_title,
    check_type,
    iso_to_epoch,
    new_note_id,
    normalise_tags,
    now_iso,
)
from ctxagent.storage.files import atomic_write_bytes, file_lock
from ctxagent.storage.ids import resolve_id

#: Textbook defaults (Hello-Agents section 9.4.3): list returns 20 notes, search 10.
DEFAULT_LIST_LIMIT = 20
DEFAULT_SEARCH_LIMIT = 10
RECENT_IN_SUMMARY = 5


class NoteStore:
    """Notes in `folder` (created on first write).

    `max_notes`: creating more raises ToolRefusedError. `auto_backup`: keep the previous
    index as `notes_index.json.bak` and the previous version of an updated or deleted
    note as `<id>.md.bak`.
    """

    def __init__(self, folder: str | Path, *, max_notes: int = 1000, auto_backup: bool = True,
                 cache: NoteCache = SHARED) -> None:
        if max_notes < 1:
            raise ToolInputError(f"max_notes must be at least 1, got {max_notes}")
        self.folder = Path(os.path.abspath(folder))
        self.max_notes = max_notes
        self.auto_backup = auto_backup
        self._cache = cache
        self._lock: FileLock | None = None

    # -- reading ---------------------------------------------------------------

    def get(self, note_id: str) -> Note:
        """The note `note_id` (or a unique prefix of its id). Raises ToolInputError (bad id) or
        NotFoundError (none; an ambiguous prefix, naming the candidates)."""
        note_path(self.folder, note_id)  # the id's form is checked before anything is read
        if not self.folder.is_dir():
            raise NotFoundError(f"note {note_id} does not exist (no notes yet in {self.folder})")
        with self._locked():
            entries = self._entries()
            note_id = _resolve(note_id, entries)
            return self._note(note_id, entries[note_id], note_path(self.folder, note_id))

    def all(self) -> list[Note]:
        """Every note, most recently updated first."""
        return sort_recent([note for note, _ in self._snapshot()])

    def _snapshot(self) -> list[tuple[Note, tuple[str, int, int]]]:
        """(note, (path, mtime_ns, size)) for every note, under the lock."""
        if not self.folder.is_dir():
            return []
        with self._locked():
            entries = self._entries()
            out = []
            for note_id, entry in entries.items():
                path = self.folder / f"{note_id}.md"  # ids in entries come from scan: checked
                out.append((self._note(note_id, entry, path), (str(path), entry["mtime_ns"], entry["size"])))
        return out

    def list(self, *, note_type: str | None = None, tags: Iterable[str] | None = None,
             limit: int = DEFAULT_LIST_LIMIT) -> list[Note]:
        """Notes of `note_type` carrying any of `tags`, most recently updated first."""
        return filter_notes(self.all(), note_type, tags)[: max(0, limit)]

    def search(self, query: str, *, note_type: str | None = None, tags: Iterable[str] | None = None,
               limit: int = DEFAULT_SEARCH_LIMIT) -> list[tuple[Note, float]]:
        """(note, relevance in [0, 1]) pairs ranked by BM25 over title, tags and body.

        Notes sharing no term with `query` are left out. Ties go to the newer note.
        Raises ToolInputError for a blank query.
        """
        if not isinstance(query, str) or not query.strip():
            raise ToolInputError("search needs a non-empty query")
        keep = note_matcher(note_type, tags)
        newest_first = sorted(self._snapshot(), key=lambda pair: _recency_key(pair[0]), reverse=True)
        snapshot = [(n, stamp) for n, stamp in newest_first if keep(n)]
        notes = [n for n, _ in snapshot]
        scores = self._cache.index(snapshot).scores(query)
        ranked = [(n, s) for n, s in zip(notes, scores) if s > 0]
        ranked.sort(key=lambda pair: -pair[1])  # stable: recency order breaks ties
        return ranked[: max(0, limit)]

    def summary(self, recent: int = RECENT_IN_SUMMARY) -> dict[str, Any]:
        """{"total_notes": int, "type_distribution": {type: count}, "recent_notes": [...]}."""
        notes = self.all()
        counts = Counter(n.type for n in notes)
        return {
            "total_notes": len(notes),
            "type_distribution": dict(counts.most_common()),
            "recent_notes": [
                {"id": n.id, "note_id": n.id, "title": n.title, "type": n.type, "tags": list(n.tags),
                 "updated_at": n.updated_at}
                for n in notes[:recent]
            ],
        }

    # -- writing ---------------------------------------------------------------

    def create(self, title: str, content: str = "", note_type: str = "general",
               tags: Any = None) -> Note:
        """Create a note and return it (with its generated id).

        Raises ToolInputError for a blank title or unknown type, ToolRefusedError when
        `max_notes` notes exist already.
        """
        note = Note(id="", title=check_title(title), type=check_type(note_type),
                    tags=normalise_tags(tags), content=check_text(_body(content), "content"))
        with self._locked():
            entries = self._entries()
            if len(entries) >= self.max_notes:
                raise ToolRefusedError(
                    f"note limit reached: {len(entries)} notes (max_notes={self.max_notes}); "
                    "delete or update old notes instead of creating new ones"
                )
            note.id = new_note_id(lambda i: i in entries or note_path(self.folder, i).exists())
            note.created_at = note.updated_at = now_iso()
            self._write(note, entries)
        return note

    def update(self, note_id: str, *, title: str | None = None, content: str | None = None,
               note_type: str | None = None, tags: Any = None) -> Note:
        """Change the given fields of a note (`note_id`: or a unique prefix of it); return the updated note.

        Raises ToolInputError (bad id, nothing to change, bad field), NotFoundError.
        """
        note_path(self.folder, note_id)  # the id's form first
        if title is None and content is None and note_type is None and tags is None:
            raise ToolInputError("nothing to update: pass title, content, note_type or tags")
        with self._locked():
            entries = self._entries()
            note_id = _resolve(note_id, entries)
            path = note_path(self.folder, note_id)
            note = self._note(note_id, entries[note_id], path)
            _apply(note, title, content, note_type, tags)
            note.updated_at = now_iso()
            self._backup(path)
            self._write(note, entries)
        return note

    def delete(self, note_id: str) -> Note:
        """Delete a note (`note_id`: or a unique prefix of it) and return what it held. Raises
        ToolInputError or NotFoundError."""
        note_path(self.folder, note_id)
        with self._locked():
            entries = self._entries()
            note_id = _resolve(note_id, entries)
            path = note_path(self.folder, note_id)
            note = self._note(note_id, entries[note_id], path)
            self._backup(path)
            path.unlink(missing_ok=True)
            del entries[note_id]
            self._cache.drop(str(path))
            index.save(self.folder, entries, backup=self.auto_backup)
        return note

    # -- internals ---------------------------------------------------------------

    def _locked(self) -> FileLock:
        if self._lock is None:
            self._lock = file_lock(self.folder / index.INDEX_NAME)
        return self._lock

    def _entries(self) -> index.Entries:
        """Index entries in step with the files; saves the index when it changed. Lock held."""
        entries, changed = index.sync(self.folder, index.load(self.folder), self._cache)
        if changed:
            index.save(self.folder, entries, backup=self.auto_backup)
        return entries

    def _note(self, note_id: str, entry: dict[str, Any], path: Path) -> Note:
        cached = self._cache.get(str(path), entry["mtime_ns"], entry["size"])
        if cached is not None:
            return cached
        note = read_note(path, note_id)
        self._cache.put(str(path), entry["mtime_ns"], entry["size"], note)
        return note

    def _write(self, note: Note, entries: index.Entries) -> None:
        sweep_stale_temp_files(self.folder)
        if not (self.folder / index.INDEX_NAME).exists():
            # index first: a crash before the index is saved then leaves a stale index
            # (caught up silently), never a missing one (which warns)
            index.save(self.folder, entries, backup=self.auto_backup)
        path = note_path(self.folder, note.id)
        stat = write_note(path, note)
        self._cache.put(str(path), stat.st_mtime_ns, stat.st_size, note)
        entries[note.id] = index.entry_for(note, stat)
        index.save(self.folder, entries, backup=self.auto_backup)

    def _backup(self, path: Path) -> None:
        if not self.auto_backup:
            return
        try:
            atomic_write_bytes(path.with_name(path.name + ".bak"), path.read_bytes())
        except (OSError, StorageError):
            pass  # a missing old file has nothing to back up


def _resolve(note_id: str, entries: index.Entries) -> str:
    """The id in `entries` that `note_id` names: itself, or the one id it is a prefix of.
    Raises NotFoundError (none; several, naming them)."""
    if note_id in entries or not any(i.startswith(note_id) for i in entries):
        if note_id not in entries:
            raise NotFoundError(f"note {note_id} does not exist; use list or search to find ids")
        return note_id
    return resolve_id(note_id, entries, what="note", listing="use list or search to find ids")


def _body(content: Any) -> str:
    """The body as stored: leading and trailing line breaks dropped (as the file keeps it)."""
    if content is None:
        return ""
    if not isinstance(content, str):
        raise ToolInputError("content must be a string (Markdown)")
    return content.strip("\r\n")


def _apply(note: Note, title: Any, content: Any, note_type: Any, tags: Any) -> None:
    if title is not None:
        note.title = check_title(title)
    if content is not None:
        note.content = check_text(_body(content), "content")
    if note_type is not None:
        note.type = check_type(note_type)
    if tags is not None:
        note.tags = normalise_tags(tags)


def _recency_key(note: Note) -> tuple[float, str]:
    return (iso_to_epoch(note.updated_at), note.id)


def sort_recent(notes: list[Note]) -> list[Note]:
    """Most recently updated first (by parsed time, then id for a stable order)."""
    return sorted(notes, key=_recency_key, reverse=True)


def note_matcher(note_type: str | None, tags: Iterable[str] | None) -> Callable[[Note], bool]:
    """A test for notes of `note_type` (any if None) carrying at least one of `tags` (any if empty).

    Raises ToolInputError for an unknown type (so a typo is not an empty answer).
    """
    if note_type is not None:
        check_type(note_type)
    if tags is not None and not isinstance(tags, (str, list, tuple)):
        tags = list(tags)
    wanted = set(normalise_tags(tags))
    return lambda n: (note_type is None or n.type == note_type) and (not wanted or bool(wanted & set(n.tags)))


def filter_notes(notes: list[Note], note_type: str | None, tags: Iterable[str] | None) -> list[Note]:
    """The notes passing `note_matcher(note_type, tags)`, order kept."""
    keep = note_matcher(note_type, tags)
    return [n for n in notes if keep(n)]
