"""Which workspace files context_fetch looks at, and the `--glob` filter, in one place.

One rule for the ripgrep and the pure-Python path: hidden names, `EXCLUDED_DIRS`, links,
files over `MAX_FILE_BYTES` and binary files skipped, `.gitignore` not read, at most
`MAX_FILES` files (docs/context-fetch.md, "Which files").
"""

from __future__ import annotations

import os
import re
import stat
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

MAX_FILE_BYTES = 1_000_000
#: Files listed at most (in sorted walk order): bounds the first index build of a huge tree.
MAX_FILES = 20_000
EXCLUDED_DIRS = ("node_modules", "__pycache__", "venv", "env", "site-packages", "dist", "build",
                 "target", "htmlcov")
BINARY_PROBE_BYTES = 8192


class FileEntry(NamedTuple):
    """A candidate file: `rel` is its workspace-relative POSIX path, `abspath` its
    absolute path; `sig` is (mtime in ns, size in bytes, inode), which changes whenever
    the file is rewritten. (A named tuple: a listing makes one per file, on every call.)"""

    rel: str
    abspath: str
    sig: tuple[int, int, int]

    @property
    def path(self) -> Path:
        return Path(self.abspath)


def list_files(root: Path, glob: str | None = None) -> list[FileEntry]:
    """Every candidate file under `root` (sorted by path) that matches `glob` if given."""
    out: list[FileEntry] = []
    _scan(str(root), "", glob, out)
    out.sort(key=lambda entry: entry.rel)
    return out


def _scan(folder: str, prefix: str, glob: str | None, out: list[FileEntry]) -> None:
    """Append the candidate files of `folder` (recursively): one scandir per folder, one
    lstat per file, no Path objects."""
    for name, is_dir in folder_items(folder) or ():
        if len(out) >= MAX_FILES:
            return
        path = os.path.join(folder, name)
        if is_dir:
            _scan(path, prefix + name + "/", glob, out)
            continue
        entry = file_entry(prefix + name, path)
        if entry is not None and (glob is None or glob_match(entry.rel, glob)):
            out.append(entry)


def folder_items(folder: str) -> list[tuple[str, bool]] | None:
    """The names the listing looks at in `folder`, sorted, each with True for a folder to walk
    into (not a link, not hidden, not in EXCLUDED_DIRS); None when it cannot be read."""
    try:
        with os.scandir(folder) as it:
            items = sorted(it, key=lambda d: d.name)
    except OSError:
        return None
    out = []
    for item in items:
        if item.name.startswith("."):
            continue
        try:
            is_dir = item.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if not (is_dir and item.name in EXCLUDED_DIRS):
            out.append((item.name, is_dir))
    return out


def file_entry(rel: str, path: str) -> FileEntry | None:
    """The entry of file `path` (its own lstat, links not followed), or None unless it is a
    regular file of at most MAX_FILE_BYTES."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    if stat.S_ISREG(st.st_mode) and st.st_size <= MAX_FILE_BYTES:
        return FileEntry(rel, path, (st.st_mtime_ns, st.st_size, st.st_ino))
    return None


def read_text(path: Path) -> str | None:
    """The file's text (UTF-8, undecodable bytes replaced), or None if binary, unreadable,
    not a regular file, a symbolic link (it may have been swapped in since the listing:
    issue 17 S14) or over MAX_FILE_BYTES."""
    data = _read_head(path, MAX_FILE_BYTES + 1)
    if data is None or len(data) > MAX_FILE_BYTES or b"\0" in data[:BINARY_PROBE_BYTES]:
        return None
    return data.decode("utf-8", errors="replace")


def is_text(path: Path) -> bool:
    """Whether `read_text(path)` would give text, from its first BINARY_PROBE_BYTES only (the
    same checks: not a link, a regular file of at most MAX_FILE_BYTES, no NUL byte there)."""
    data = _read_head(path, BINARY_PROBE_BYTES)
    return data is not None and b"\0" not in data


def _read_head(path: Path, limit: int) -> bytes | None:
    """At most `limit` bytes of `path`, or None if it cannot be opened without following a link,
    is not a regular file, is over MAX_FILE_BYTES or cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
                return None
            return f.read(limit)
        except OSError:
            return None


def glob_match(rel: str, glob: str) -> bool:
    """Gitignore-style glob, as ripgrep's `--glob` reads it.

    A glob without "/" matches the file name at any depth (`*.py`); with "/" it matches
    the whole relative path (`src/**/*.py`, `docs/*.md`); `**` spans folders, `*` and `?`
    stay within one; a leading "!" negates (exclude matches).
    """
    if glob.startswith("!"):
        return not glob_match(rel, glob[1:])
    pattern = glob.lstrip("/")
    target = rel if "/" in pattern else rel.rsplit("/", 1)[-1]
    return _glob_regex(pattern).match(target) is not None


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            out.append(_glob_char(pattern, i))
            i += len(_class_at(pattern, i)) if pattern[i] == "[" and _class_at(pattern, i) else 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def _glob_char(pattern: str, i: int) -> str:
    char = pattern[i]
    if char == "*":
        return "[^/]*"
    if char == "?":
        return "[^/]"
    klass = _class_at(pattern, i) if char == "[" else ""
    if klass:
        body = klass[1:-1]
        body = "^" + body[1:] if body.startswith("!") else body
        return "[" + body.replace("\\", "\\\\") + "]"
    return re.escape(char)


def _class_at(pattern: str, i: int) -> str:
    """The `[...]` character class starting at `i`, or "" if unterminated."""
    end = pattern.find("]", i + 2)
    return pattern[i : end + 1] if end != -1 else ""
