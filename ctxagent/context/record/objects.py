"""What repeats from call to call, stored once: a session's `objects.jsonl` of snapshots.

Each line is `{"id": <16 hex>, "value": <JSON>}`, the id the first 16 hex digits of the
SHA-256 of the value's canonical JSON. A list (the messages, the packet rows) is stored as
a chain of `{"prev": id|null, "items": [id...]}` links, so a list that grows at its end
costs one link and its new items per call. Lines are only appended; a torn last line is passed
over. Writes reach the OS at once and are fsynced in batches (`SYNC_EVERY`, `flush_all`).
The format and the fsync rule: docs/context.md ("Snapshot files").
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from ctxagent.errors import StorageError
from ctxagent.storage.files import fsync_dir, fsync_path, guard_state_path, json_bytes, refuse_link

OBJECTS_FILE = "objects.jsonl"
#: A reference to a stored value, as written in a call's file: "@" + its id.
REF = "@"
#: Unsynced call files after which the batch is fsynced (and at every turn's end).
SYNC_EVERY = 8
#: Seconds after which a write fsyncs the batch even when it is smaller.
SYNC_SECONDS = 5.0

_lock = threading.Lock()
_stores: dict[str, ObjectStore] = {}


def object_id(value: Any) -> str:
    """The id of `value`: 16 hex digits of the SHA-256 of its canonical JSON (sorted keys)."""
    return hashlib.sha256(canonical(value)).hexdigest()[:16]


def canonical(value: Any) -> bytes:
    """`value` as compact JSON with sorted keys, the bytes its id is computed from."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                      default=str).encode("utf-8", "backslashreplace")


class ObjectStore:
    """The objects of one session's snapshot folder `folder` (a Path). `put`/`put_list` give
    refs ("@<id>"); `mark_written(path)` queues a call file for the batch fsync."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.path = self.folder / OBJECTS_FILE
        self.known: set[str] = set()
        self._seen_size = -1  # the file's size when `known` was read or last written
        self._buffer: list[bytes] = []
        self._unsynced: list[Path] = []
        self._first_unsynced = 0.0
        self._cache: dict[tuple, tuple[str, bool]] = {}  # (secrets, raw id) -> (stored id, redacted)
        self._lists: dict[str, tuple[list[str], list[tuple[int, str]]]] = {}  # slot -> (ids, [(end, link)])
        #: Held from `begin` to `write` by a writer (`snapshot._write_packed`): one snapshot at a time.
        self.lock = threading.RLock()

    def put(self, value: Any, scrub: Callable[[Any], Any] | None = None, key: tuple = ()) -> tuple[str, bool]:
        """(ref, redacted) for `value`, stored scrubbed by `scrub`; a value seen before (same
        `key`, same raw JSON) is neither scrubbed nor stored again."""
        raw = object_id(value)
        hit = self._cache.get((key, raw))
        if hit is None:
            clean = scrub(value) if scrub is not None else value
            oid = object_id(clean)
            hit = (oid, oid != raw)
            self._add(oid, clean)
            self._cache[(key, raw)] = hit
        return REF + hit[0], hit[1]

    def put_list(self, items: list, scrub: Callable[[Any], Any] | None = None, key: tuple = (),
                 slot: str = "") -> tuple[Any, bool]:
        """(ref of the chain of `items`, redacted); [] stays []. The chain reuses the links of
        the last list put in `slot` (e.g. "messages") up to where the two differ, and adds one
        link holding the ids of the items after that point."""
        if not items:
            return [], False
        refs = [self.put(item, scrub, key) for item in items]
        ids = [ref[1:] for ref, _ in refs]
        last_ids, bounds = self._lists.get(slot, ([], []))
        same = next((i for i, (a, b) in enumerate(zip(ids, last_ids)) if a != b), min(len(ids), len(last_ids)))
        kept = [(end, node) for end, node in bounds if end <= same]
        start, prev = kept[-1] if kept else (0, None)
        if start < len(ids):
            link = {"prev": prev, "items": ids[start:]}
            prev = object_id(link)
            self._add(prev, link)
            kept.append((len(ids), prev))
        self._lists[slot] = (ids, kept)
        return REF + prev, any(changed for _, changed in refs)

    def _add(self, oid: str, value: Any) -> None:
        if oid in self.known:
            return
        self.known.add(oid)
        self._buffer.append(json_bytes({"id": oid, "value": value}, separators=(",", ":"), default=str) + b"\n")

    def begin(self) -> None:
        """Start a snapshot: re-read the ids on disk when the file is not as this store left
        it (first use, another writer, a pruned folder: then nothing cached is trusted)."""
        try:
            size = self.path.stat().st_size
        except OSError:
            size = 0
        if size == self._seen_size:
            return
        if size < self._seen_size:
            self._cache.clear()
            self._lists.clear()
        self.known = set(read_objects(self.path)) if size else set()
        self._buffer = []
        self._seen_size = size

    def write(self) -> None:
        """Append the values put since `begin` (StorageError when it cannot: then nothing
        put since is trusted to be on disk)."""
        if not self._buffer:
            return
        data, self._buffer = b"".join(self._buffer), []
        try:
            guard_state_path(self.path)
            refuse_link(self.path)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    data = b"\n" + data  # a torn line of a crash stays alone
                os.write(fd, data)
                self._seen_size = os.fstat(fd).st_size
            finally:
                os.close(fd)
        except (OSError, StorageError) as exc:
            self.known.clear()
            self._cache.clear()
            self._lists.clear()
            self._seen_size = -1
            if isinstance(exc, StorageError):
                raise
            raise StorageError(f"could not write {self.path}: {exc.strerror or exc}") from exc

    def mark_written(self, path: Path) -> None:
        """Queue call file `path` for the batch fsync; sync when the batch is full or old."""
        if not self._unsynced:
            self._first_unsynced = time.monotonic()
        self._unsynced.append(Path(path))
        if len(self._unsynced) >= SYNC_EVERY or time.monotonic() - self._first_unsynced >= SYNC_SECONDS:
            self.sync()

    def sync(self) -> None:
        """fsync the objects file, the queued call files and the folder (errors are passed over:
        the data is with the OS already)."""
        files, self._unsynced = [self.path, *self._unsynced], []
        for path in files:
            fsync_path(path)
        fsync_dir(self.folder)


def store_for(folder: Path) -> ObjectStore:
    """The process's one ObjectStore of snapshot folder `folder`."""
    key = str(Path(folder).resolve())
    with _lock:
        if not _stores:
            atexit.register(flush_all)
        if key not in _stores:
            _stores[key] = ObjectStore(Path(folder))
        return _stores[key]


def flush_all() -> None:
    """fsync every store's unsynced writes (at a turn's end, at exit)."""
    with _lock:
        stores = list(_stores.values())
    for store in stores:
        if store._unsynced:
            store.sync()


def read_objects(path: Path) -> dict[str, Any]:
    """{id: value} of an objects file; torn or foreign lines passed over; {} if absent."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise StorageError(f"could not read {path}: {exc.strerror or exc}") from exc
    found: dict[str, Any] = {}
    for line in data.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("id"), str) and "value" in entry:
            found[entry["id"]] = entry["value"]
    return found


def resolve(value: Any, objects: dict[str, Any], *, chain: bool) -> Any:
    """The value a ref names (`chain`: the list its links make); other values unchanged.
    Raises ValueError naming the first id that is missing."""
    if not (isinstance(value, str) and value.startswith(REF)):
        return value
    oid = value[1:]
    if not chain:
        if oid not in objects:
            raise ValueError(f"object {oid} is missing from {OBJECTS_FILE}")
        return objects[oid]
    runs: list[list] = []
    while oid is not None:
        link = objects.get(oid)
        ids = (link.get("items") if "items" in link else [link.get("item")]) if isinstance(link, dict) else None
        if not isinstance(ids, list) or not all(isinstance(i, str) and i in objects for i in ids):
            raise ValueError(f"object {oid} is missing from {OBJECTS_FILE}")
        runs.append([objects[i] for i in ids])
        oid = link.get("prev")
    return [item for run in reversed(runs) for item in run]
