"""The workspace listing kept between calls: a re-check stats, it does not walk again.

`Listing.refresh()` gives what `walk.list_files(root)` would give now, and says whether it
changed. A full check stats every known folder ((mtime, ctime, inode): an unchanged one has
the same names, so only its files are stat'ed) and reads a changed one, or one changed within
RACY_NS of a check, again. With an inotify watcher (each folder watched before it is read), a
re-check does that only for the folders with an event, and is full whenever the watcher cannot
vouch. Why this is never stale: docs/context-fetch.md, "The freshness check".
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from ctxagent.fetch.inotify import Watcher
from ctxagent.fetch.walk import MAX_FILE_BYTES, MAX_FILES, FileEntry, folder_items, list_files

#: A folder changed this close (ns) to the clock when it was read may change again within the
#: same timestamp tick (a jiffy; 2 s on FAT): it is read again at the next check ("racy git").
RACY_NS = 2_000_000_000


@dataclass(frozen=True)
class _Folder:
    """One folder as last read: its signature, whether that was racy, its names (sorted)."""

    sig: tuple[int, int, int]
    racy: bool
    files: tuple[str, ...]
    folders: tuple[str, ...]


class Listing:
    """The candidate files of workspace `root` (`entries`, sorted by path, as `list_files`).
    `watch`: use an inotify watcher when one is available (`ctxagent.fetch.inotify`).
    Not thread-safe: its owner (`ctxagent.fetch.cache.WorkspaceCache`) holds a lock."""

    def __init__(self, root: Path, *, watch: bool = True) -> None:
        self.root = str(root)
        self.entries: list[FileEntry] = []
        self._folders: dict[str, _Folder] = {}
        self._by_rel: dict[str, FileEntry] = {}
        self._fresh = True
        self.watcher = Watcher.open(self.root) if watch else None
        self._watched = False  # every listed folder was watched before it was read
        self._dev: int | None = None
        self._diff = 0  # entries an update changed
        self._racy: set[str] = set()  # folders to read again at the next check

    def refresh(self) -> bool:
        """Bring `entries` up to date (see the module doc); True when they changed (and on the
        first call). A tree of MAX_FILES files or more is walked whole every time."""
        watcher = self.watcher
        if watcher is not None and not watcher.owned():  # forked: the events are the parent's
            self.watcher, self._watched, watcher = None, False, None
        changed = watcher.changed() if watcher is not None and self._watched else None
        if changed is not None:
            result = self._update(changed)
            if result is not None:
                return result
        return self._full()

    def close(self) -> None:
        """Release the watcher (the listing goes on with full checks)."""
        if self.watcher is not None:
            self.watcher.close()
        self.watcher, self._watched = None, False

    def _full(self) -> bool:
        """The check of every known folder and file (the one a fresh process does)."""
        now = time.time_ns()
        folders: dict[str, _Folder] = {}
        out: list[FileEntry] = []
        self._watched, self._dev = self.watcher is not None, None
        if self.watcher is not None:
            self.watcher.reset()  # what happens from now on is in the next events
        self._visit("", self.root, True, now, folders, out)
        if len(out) >= MAX_FILES:  # the cap cuts in walk order: leave that to the walk itself
            out, folders = list_files(Path(self.root)), {}
            self.close()
        if self.watcher is not None and not self._watched:
            self.close()  # a folder could not be watched: full checks from now on
        elif self.watcher is not None:
            for rel in self.watcher.rels() - folders.keys():
                self.watcher.drop(rel)
        by_rel = self._by_rel
        changed = self._fresh or len(out) != len(by_rel) or any(by_rel.get(e.rel) is not e for e in out)
        self._folders, self._fresh = folders, False
        self._racy = {rel for rel, folder in folders.items() if folder.racy}
        if changed:
            out.sort(key=lambda entry: entry.rel)
            self.entries, self._by_rel = out, {e.rel: e for e in out}
        return changed

    def _update(self, changed: set[str]) -> bool | None:
        """The check of the folders with an event (or racy) only; None when it cannot tell
        (a folder vanished or could not be watched, or the cap): then the full check runs."""
        work = sorted(changed | self._racy)
        if not work:
            return False
        now, before = time.time_ns(), len(self._by_rel)
        self._diff = 0
        for rel in work:
            if rel in self._folders and not self._recheck(rel, now):
                self._fresh = True  # partly updated: the full check reports a change
                return None
        if len(self._by_rel) >= MAX_FILES:
            self._fresh = True
            return None
        if not self._diff and len(self._by_rel) == before:
            return False
        self.entries = sorted(self._by_rel.values(), key=lambda entry: entry.rel)
        return True

    def _recheck(self, rel: str, now: int) -> bool:
        """Folder `rel` and its files again (its new subfolders walked, gone ones dropped, kept
        ones re-checked when its names changed); False when the full check must answer."""
        path = os.path.join(self.root, rel) if rel else self.root
        assert self.watcher is not None
        state = self.watcher.add(path, rel, follow=not rel)
        try:
            st = os.stat(path, follow_symlinks=not rel)
        except OSError:
            return False
        if state is None or not stat.S_ISDIR(st.st_mode) or st.st_dev != self._dev:
            return False
        known = self._folders[rel]
        sig = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        if state == "new":  # another folder is at this path now: walk it as new
            if not rel:
                return False
            self._drop(rel)
            return self._walk_new(rel, path, now)
        fresh = _read(path, sig, now) if known.racy or known.sig != sig else known
        self._folders[rel] = fresh
        if fresh.racy:
            self._racy.add(rel)
        else:
            self._racy.discard(rel)
        prefix = rel + "/" if rel else ""
        for name in set(known.files) - set(fresh.files):
            self._diff += self._by_rel.pop(prefix + name, None) is not None
        for name in fresh.files:
            entry = _entry(prefix + name, os.path.join(path, name), self._by_rel.get(prefix + name))
            if entry is None:
                self._diff += self._by_rel.pop(prefix + name, None) is not None
            elif self._by_rel.get(entry.rel) is not entry:
                self._by_rel[entry.rel], self._diff = entry, self._diff + 1
        for name in set(known.folders) - set(fresh.folders):
            self._drop(prefix + name)
        for name in fresh.folders:
            sub = prefix + name
            if sub not in self._folders:
                if not self._walk_new(sub, os.path.join(path, name), now):
                    return False
            elif fresh is not known and not self._recheck(sub, now):
                return False
        return True

    def _walk_new(self, rel: str, path: str, now: int) -> bool:
        """Add the folder tree at `path` (as `rel`) to the listing, watching it first."""
        folders: dict[str, _Folder] = {}
        out: list[FileEntry] = []
        self._visit(rel, path, not rel, now, folders, out)
        self._folders.update(folders)
        self._racy.update(sub for sub, folder in folders.items() if folder.racy)
        self._by_rel.update((e.rel, e) for e in out)
        self._diff += len(out)
        return self._watched

    def _drop(self, rel: str) -> None:
        """Forget folder `rel`, everything under it, and their watches."""
        inside = rel + "/"
        for folder in [f for f in self._folders if f == rel or f.startswith(inside)]:
            del self._folders[folder]
            self._racy.discard(folder)
            if self.watcher is not None:
                self.watcher.drop(folder)
        for file_rel in [r for r in self._by_rel if r.startswith(inside)]:
            del self._by_rel[file_rel]
            self._diff += 1

    def _visit(self, rel: str, path: str, follow: bool, now: int, folders: dict[str, _Folder],
               out: list[FileEntry]) -> None:
        """Append the candidate files under folder `path` (`rel` + "/" prefixes their paths);
        `follow`: the root may be a link, the folders under it are not followed. With a
        watcher, each folder is watched before it is read (`_watched` False if one is not)."""
        watched = self.watcher.add(path, rel, follow=follow) if self._watched and self.watcher else True
        try:
            st = os.stat(path, follow_symlinks=follow)
        except OSError:
            return
        if not stat.S_ISDIR(st.st_mode):
            return
        if self._dev is None:
            self._dev = st.st_dev
        if watched is None or st.st_dev != self._dev:  # another file system: its events may not come here
            self._watched = False
        sig = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        known = self._folders.get(rel)
        if known is None or known.racy or known.sig != sig:
            known = _read(path, sig, now)
        folders[rel] = known
        prefix, base = (rel + "/" if rel else ""), path + os.sep
        old = self._by_rel
        for name in known.files:
            if len(out) >= MAX_FILES:
                return
            entry = _entry(prefix + name, base + name, old.get(prefix + name))
            if entry is not None:
                out.append(entry)
        for name in known.folders:
            self._visit(prefix + name, base + name, False, now, folders, out)


def _entry(rel: str, path: str, same: FileEntry | None) -> FileEntry | None:
    """The listed file at `path` now (`same` if its signature did not change), or None when it
    is not a candidate (gone, not a regular file, over MAX_FILE_BYTES)."""
    try:
        fst = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    if not stat.S_ISREG(fst.st_mode) or fst.st_size > MAX_FILE_BYTES:
        return None
    sig = (fst.st_mtime_ns, fst.st_size, fst.st_ino)
    return same if same is not None and same.sig == sig else FileEntry(rel, path, sig)


def _read(path: str, sig: tuple[int, int, int], now: int) -> _Folder:
    """Folder `path` read now (its names as `walk.folder_items` gives them)."""
    items = folder_items(path) or []
    racy = sig[0] >= now - RACY_NS or sig[1] >= now - RACY_NS
    return _Folder(sig, racy, tuple(n for n, is_dir in items if not is_dir), tuple(n for n, is_dir in items if is_dir))
