"""Linux inotify for the listing: which watched folders changed since the last look.

`Watcher.open(root)` gives a watcher, or None where changes could go unseen (not Linux, no
inotify, a file system whose remote writers inotify misses, e.g. NFS, 9p, FUSE). `add`
watches one folder; `changed()` reads every event queued so far without blocking (the kernel
queues one during the system call that makes the change) and says which folders they were
in, or None when some may be lost (queue overflow, another process after a fork). ctypes on
libc: no thread, no native code. Why not watchdog: docs/context-fetch.md, "The watcher".
"""

from __future__ import annotations

import os
import struct
import sys
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

#: Events that mean a name in the folder, or the folder itself, may differ now.
_MASK = (0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800)  # MODIFY ATTRIB CLOSE_WRITE MOVED_* CREATE DELETE* MOVE_SELF
_ONLYDIR, _DONT_FOLLOW, _OVERFLOW, _IGNORED = 0x1000000, 0x2000000, 0x4000, 0x8000
_NONBLOCK_CLOEXEC = os.O_NONBLOCK | 0o2000000
_EVENT = struct.Struct("iIII")
#: File systems whose every change passes through this kernel (so inotify sees it).
LOCAL_FS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs", "f2fs", "jfs",
                      "reiserfs", "bcachefs", "ramfs"})
#: Watches one listing may take, at most: a share of the per-user limit (others need theirs).
MAX_WATCHES = 10_000


class Watcher:
    """Folder watches on one inotify instance; not thread-safe (the listing's owner locks).
    Folders are named by the caller's `rel`s; `limit` is the most watches it will add."""

    def __init__(self, libc: ctypes.CDLL, fd: int, limit: int) -> None:
        self._libc, self._fd, self._pid, self.limit = libc, fd, os.getpid(), limit
        self._rels: dict[int, set[str]] = {}  # watch descriptor -> folders (one inode may show twice)
        self._wd: dict[str, int] = {}
        self._lost = False  # events were dropped since the last `reset`
        self._closer = weakref.finalize(self, os.close, fd)  # one inotify instance of a per-user 128

    @classmethod
    def open(cls, root: str) -> Watcher | None:
        """A watcher for the tree at `root`, or None (see the module doc)."""
        if not sys.platform.startswith("linux") or fs_type(root) not in LOCAL_FS:
            return None
        import ctypes  # here: only a process that lists a workspace pays for it

        try:
            libc = ctypes.CDLL(None, use_errno=True)  # the symbols already loaded, libc's among them
            libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            fd = libc.inotify_init1(_NONBLOCK_CLOEXEC)
        except (OSError, AttributeError):
            return None
        return cls(libc, fd, watch_limit()) if fd >= 0 else None

    def add(self, path: str, rel: str, *, follow: bool = False) -> str | None:
        """Watch the folder now at `path` as `rel`: "same" when that watch was already there,
        "new" when not (or another folder is at `path` now), None when it cannot be (the
        limit, ENOSPC, a vanished folder): then changes there would go unseen."""
        known = self._wd.get(rel)
        if known is None and len(self._wd) >= self.limit:
            return None
        mask = _MASK | _ONLYDIR | (0 if follow else _DONT_FOLLOW)
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), mask)
        if wd < 0:
            return None
        if wd == known:
            return "same"
        if known is not None:
            self.drop(rel)
        self._rels.setdefault(wd, set()).add(rel)
        self._wd[rel] = wd
        return "new"

    def rels(self) -> set[str]:
        """The folders watched."""
        return set(self._wd)

    def owned(self) -> bool:
        """False after a fork (this process must not read the parent's events) or `close`."""
        return self._fd >= 0 and os.getpid() == self._pid

    def drop(self, rel: str) -> None:
        """Stop reporting folder `rel` (it left the listing)."""
        wd = self._wd.pop(rel, None)
        if wd is None:
            return
        rels = self._rels.get(wd, set())
        rels.discard(rel)
        if not rels:
            self._rels.pop(wd, None)
            self._libc.inotify_rm_watch(self._fd, wd)

    def changed(self) -> set[str] | None:
        """The folders (rels) with an event since the last call, or None when events may have
        been lost since the last `reset` (queue overflow; another process after a fork)."""
        if os.getpid() != self._pid:
            return None
        found: set[str] = set()
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                break
            except InterruptedError:
                continue
            except OSError:
                self._lost = True
                break
            offset = 0
            while offset < len(data):
                wd, mask, _, size = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size + size
                self._lost |= bool(mask & _OVERFLOW)
                found.update(self._rels.get(wd, ()))
                if mask & _IGNORED:  # the folder was removed (or its file system unmounted)
                    for rel in self._rels.pop(wd, ()):
                        self._wd.pop(rel, None)
        return None if self._lost else found

    def reset(self) -> None:
        """Read and forget the events queued so far: the caller checks everything now."""
        self.changed()
        self._lost = False

    def close(self) -> None:
        """Release the watches (closing the instance frees them all)."""
        if self._fd >= 0:
            self._closer()
            self._fd = -1
            self._rels.clear()
            self._wd.clear()


def watch_limit() -> int:
    """Watches one listing may add: MAX_WATCHES, or a quarter of the per-user limit if lower."""
    try:
        with open("/proc/sys/fs/inotify/max_user_watches", encoding="ascii") as f:
            return min(MAX_WATCHES, int(f.read()) // 4)
    except (OSError, ValueError):
        return 2048


def fs_type(path: str) -> str:
    """The type of the file system holding `path` ("ext4", "nfs", ...; "" when unknown), from
    the longest mount point over it in /proc/self/mountinfo."""
    path = os.path.realpath(path)
    best, kind = "", ""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                fields, _, rest = line.partition(" - ")
                parts = fields.split()
                if len(parts) < 5 or not rest:
                    continue
                point = parts[4].replace("\\040", " ")
                inside = path == point or path.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best):
                    best, kind = point, rest.split()[0]
    except OSError:
        return ""
    return kind
