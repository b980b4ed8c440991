"""The workspace listing kept between calls: a re-check stats, it does not walk again.

`Listing.refresh()` gives what `walk.list_files(root)` would give now, and says whether it
changed. A folder whose (mtime, ctime, inode) is unchanged has the same names (adding,
removing or renaming an entry sets both times; restoring the mtime sets the ctime), so only
its files are stat'ed; a changed folder, or one changed within RACY_NS of a check, is read
again. Why this is never stale: docs/context-fetch.md, "The freshness check".
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

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
    Not thread-safe: its owner (`ctxagent.fetch.cache.WorkspaceCache`) holds a lock."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.entries: list[FileEntry] = []
        self._folders: dict[str, _Folder] = {}
        self._by_rel: dict[str, FileEntry] = {}
        self._fresh = True

    def refresh(self) -> bool:
        """Bring `entries` up to date (see the module doc); True when they changed (and on the
        first call). A tree of MAX_FILES files or more is walked whole every time."""
        now = time.time_ns()
        folders: dict[str, _Folder] = {}
        out: list[FileEntry] = []
        self._visit("", self.root, True, now, folders, out)
        if len(out) >= MAX_FILES:  # the cap cuts in walk order: leave that to the walk itself
            out, folders = list_files(Path(self.root)), {}
        by_rel = self._by_rel
        changed = self._fresh or len(out) != len(by_rel) or any(by_rel.get(e.rel) is not e for e in out)
        self._folders, self._fresh = folders, False
        if changed:
            out.sort(key=lambda entry: entry.rel)
            self.entries, self._by_rel = out, {e.rel: e for e in out}
        return changed

    def _visit(self, rel: str, path: str, follow: bool, now: int, folders: dict[str, _Folder],
               out: list[FileEntry]) -> None:
        """Append the candidate files under folder `path` (`rel` + "/" prefixes their paths);
        `follow`: the root may be a link, the folders under it are not followed."""
        try:
            st = os.stat(path, follow_symlinks=follow)
        except OSError:
            return
        if not stat.S_ISDIR(st.st_mode):
            return
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
            file_path = base + name
            try:
                fst = os.stat(file_path, follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(fst.st_mode) or fst.st_size > MAX_FILE_BYTES:
                continue
            file_rel, file_sig = prefix + name, (fst.st_mtime_ns, fst.st_size, fst.st_ino)
            same = old.get(file_rel)
            out.append(same if same is not None and same.sig == file_sig else FileEntry(file_rel, file_path, file_sig))
        for name in known.folders:
            self._visit(prefix + name, base + name, False, now, folders, out)


def _read(path: str, sig: tuple[int, int, int], now: int) -> _Folder:
    """Folder `path` read now (its names as `walk.folder_items` gives them)."""
    items = folder_items(path) or []
    racy = sig[0] >= now - RACY_NS or sig[1] >= now - RACY_NS
    return _Folder(sig, racy, tuple(n for n, is_dir in items if not is_dir), tuple(n for n, is_dir in items if is_dir))
