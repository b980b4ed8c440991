"""Per-workspace ranking index and a small LRU of file results, invalidated on change.

The workspace listing (`ctxagent.fetch.listing`, (mtime, size, inode) per file) keeps the
index and the LRU valid; `invalidate` forces a refresh. MAX_WORKSPACES indexes are kept
process-wide (docs/context-fetch.md, "Cache").
The index is on disk in `.ctxagent/index/fetch.db` when `.ctxagent/` exists, else in memory
(looking creates no state folder; docs/context-fetch.md, "Cache and the on-disk index").
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Hashable, Iterable

from ctxagent.errors import StorageError
from ctxagent.fetch.listing import Listing
from ctxagent.fetch.rank import WorkspaceIndex
from ctxagent.fetch.store import IndexStore
from ctxagent.fetch.walk import FileEntry
from ctxagent.storage.files import STATE_DIR_NAME, state_dir

MAX_RESULTS = 32
MAX_WORKSPACES = 8
#: The on-disk index, inside the workspace's state folder (docs/context-fetch.md).
INDEX_PATH = Path("index", "fetch.db")


class LRU:
    """A small least-recently-used map (thread-safe). `maxsize` entries at most."""

    def __init__(self, maxsize: int = MAX_RESULTS) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        """The value for `key` (now most recent), or None."""
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: Hashable, value: Any) -> None:
        """Store `value`, evicting the least recently used entry when full."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._items

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


class WorkspaceCache:
    """The index and result cache of one workspace folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.index = WorkspaceIndex(open_store(root))
        self.results = LRU()
        self.listing = Listing(root)
        self._generation = 0
        self._stale = True
        self._lock = threading.Lock()

    @property
    def stamp(self) -> int | None:
        """Which refresh the index is at: changes with each one (None before the first)."""
        return None if self._generation == 0 else self._generation

    def sync(self) -> tuple[list[FileEntry], int]:
        """Update the index to the workspace's files now; returns (those files, how many this
        call (re-)indexed or dropped: 0 also when another process sharing the index had)."""
        updated = 0
        with self._lock:
            if self.index.store.path is None and os.path.isdir(self.root / STATE_DIR_NAME):
                self.index, self._stale = WorkspaceIndex(open_store(self.root)), True
            if self.listing.refresh() or self._stale:
                updated = self.index.refresh(self.listing.entries)
                self.results.clear()
                self._generation += 1
                self._stale = False
            return self.listing.entries, updated

    def invalidate(self, paths: Iterable[str] | None = None) -> None:
        """Forget cached results and the index entries of `paths` (workspace-relative
        POSIX paths; all files if None): the next `sync` re-reads them."""
        with self._lock:
            self.index.forget(None if paths is None else [_rel(p) for p in paths])
            self.results.clear()
            self._stale = True


    def close(self) -> None:
        """Release the listing's watcher (the cache left the registry; it still answers)."""
        with self._lock:
            self.listing.close()


def open_store(root: Path) -> IndexStore:
    """The index store of workspace `root`: on disk when `root/.ctxagent/` exists, else in
    memory (also when the state folder is refused, e.g. a symbolic link, or unwritable)."""
    if os.path.isdir(root / STATE_DIR_NAME):
        try:
            return IndexStore(state_dir(root) / INDEX_PATH)
        except StorageError:
            pass
    return IndexStore(None)


_REGISTRY: OrderedDict[Path, WorkspaceCache] = OrderedDict()
_REGISTRY_LOCK = threading.Lock()


def workspace_cache(root: Path) -> WorkspaceCache:
    """The shared cache for workspace `root` (resolved), created on first use."""
    root = root.resolve()
    evicted = []
    with _REGISTRY_LOCK:
        cache = _REGISTRY.get(root)
        if cache is None:
            cache = _REGISTRY[root] = WorkspaceCache(root)
        _REGISTRY.move_to_end(root)
        while len(_REGISTRY) > MAX_WORKSPACES:
            evicted.append(_REGISTRY.popitem(last=False)[1])
    for old in evicted:
        old.close()
    return cache


def _rel(path: str) -> str:
    return Path(path).as_posix().removeprefix("./")


def invalidate(root: str | Path | None = None, paths: Iterable[str] | None = None) -> None:
    """Drop cached context_fetch results of workspace `root` (all workspaces if None)
    and re-read `paths` (relative to `root`; every file if None) at the next fetch.

    Call after changing files (the patch tool does on success, with the paths it
    wrote); cheap and safe to call from any thread.
    """
    paths = None if paths is None else list(paths)
    with _REGISTRY_LOCK:
        caches = list(_REGISTRY.values()) if root is None else [_REGISTRY.get(Path(root).resolve())]
    for cache in caches:
        if cache is not None:
            cache.invalidate(paths)
