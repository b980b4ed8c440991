"""A process-wide cache of parsed notes and their search terms, keyed by file and stamp.

Every `NoteStore` (the agent's tool, the context engine's per-turn reader, the CLI)
shares it, so a note file is parsed and tokenized once per version: an entry is valid
only while the file's (mtime_ns, size) stay the same. Bounded to MAX_ENTRIES notes,
least recently used out first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from ctxagent.notes.model import Note
from ctxagent.text.scoring import BM25Index
from ctxagent.text.terms import terms

MAX_ENTRIES = 20_000
#: BM25 indexes kept (one per distinct set of note versions searched, e.g. per filter).
MAX_INDEXES = 8

Stamp = tuple[str, int, int]  # (path, mtime_ns, size) of one note file version


def _copy(note: Note) -> Note:
    return Note(**{**note.__dict__, "tags": list(note.tags)})


def search_text(note: Note) -> str:
    """What search indexes: the title twice (a title match weighs more), tags, body."""
    return f"{note.title}\n{note.title}\n{' '.join(note.tags)}\n{note.content}"


class NoteCache:
    """{path: (mtime_ns, size, note, terms or None)}; thread-safe; `get` returns copies."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._items: OrderedDict[str, tuple[int, int, Note, list[str] | None]] = OrderedDict()
        self._indexes: OrderedDict[tuple[Stamp, ...], BM25Index] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: str, mtime_ns: int, size: int) -> Note | None:
        """A copy of the cached note for this file version, or None."""
        with self._lock:
            item = self._items.get(path)
            if item is None or item[:2] != (mtime_ns, size):
                return None
            self._items.move_to_end(path)
            return _copy(item[2])

    def put(self, path: str, mtime_ns: int, size: int, note: Note) -> None:
        """Remember `note` as the content of this file version."""
        with self._lock:
            self._items[path] = (mtime_ns, size, _copy(note), None)
            self._items.move_to_end(path)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)

    def terms(self, path: str, mtime_ns: int, size: int, note: Note) -> list[str]:
        """The index terms of `note` (`ctxagent.text.terms` of `search_text`), computed once."""
        with self._lock:
            item = self._items.get(path)
            if item is not None and item[:2] == (mtime_ns, size) and item[3] is not None:
                return item[3]
        found = terms(search_text(note))
        with self._lock:
            item = self._items.get(path)
            if item is not None and item[:2] == (mtime_ns, size):
                self._items[path] = (*item[:3], found)
        return found

    def index(self, versions: list[tuple[Note, Stamp]]) -> BM25Index:
        """The BM25 index over these note versions (document i = versions[i]), built once."""
        key = tuple(stamp for _, stamp in versions)
        with self._lock:
            found = self._indexes.get(key)
            if found is not None:
                self._indexes.move_to_end(key)
                return found
        built = BM25Index([self.terms(*stamp, note) for note, stamp in versions])
        with self._lock:
            self._indexes[key] = built
            while len(self._indexes) > MAX_INDEXES:
                self._indexes.popitem(last=False)
        return built

    def drop(self, path: str) -> None:
        """Forget a file (after it was deleted)."""
        with self._lock:
            self._items.pop(path, None)


SHARED = NoteCache()
