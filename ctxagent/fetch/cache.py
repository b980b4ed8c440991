"""Per-workspace ranking index and a small LRU of file results, invalidated on change.

The fingerprint of the workspace listing ((mtime, size, inode) per file) keeps the
index and the LRU valid; `invalidate` forces a refresh. MAX_WORKSPACES indexes are kept
process-wide (docs/context-fetch.md, "Cache").
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Hashable, Iterable

from ctxagent.fetch.rank import WorkspaceIndex
from ctxagent.fetch.walk import FileEntry

MAX_RESULTS = 32
MAX_WORKSPACES = 8


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

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


def fingerprint(entries: list[FileEntry]) -> str:
    """A digest of every file's path and signature: changes when any file changes."""
    digest = hashlib.blake2b(digest_size=16)
    for entry in entries:
        digest.update(f"{entry.rel}\0{entry.sig}\n".encode("utf-8", errors="surrogatepass"))
    return digest.hexdigest()


class WorkspaceCache:
    """The index and result cache of one workspace folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.index = WorkspaceIndex()
        self.results = LRU()
        self._fingerprint: str | None = None
        self._lock = threading.Lock()

    def sync(self, entries: list[FileEntry]) -> str:
        """Update the index to `entries` if they changed; returns their fingerprint."""
        stamp = fingerprint(entries)
        with self._lock:
            if stamp != self._fingerprint:
                self.index.refresh(entries)
                self.results.clear()
                self._fingerprint = stamp
        return stamp

    def invalidate(self, paths: Iterable[str] | None = None) -> None:
        """Forget cached results and the index entries of `paths` (workspace-relative
        POSIX paths; all files if None): the next `sync` re-reads them."""
        with self._lock:
            self.index.forget(None if paths is None else [_rel(p) for p in paths])
            self.results.clear()
            self._fingerprint = None


_REGISTRY: OrderedDict[Path, WorkspaceCache] = OrderedDict()
_REGISTRY_LOCK = threading.Lock()


def workspace_cache(root: Path) -> WorkspaceCache:
    """The shared cache for workspace `root` (resolved), created on first use."""
    root = root.resolve()
    with _REGISTRY_LOCK:
        cache = _REGISTRY.get(root)
        if cache is None:
            cache = _REGISTRY[root] = WorkspaceCache(root)
        _REGISTRY.move_to_end(root)
        while len(_REGISTRY) > MAX_WORKSPACES:
            _REGISTRY.popitem(last=False)
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
