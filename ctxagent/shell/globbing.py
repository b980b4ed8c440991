"""Bounded shell-style glob expansion for the terminal's path operands.

`bounded_glob(pattern, cwd)` matches as `glob.glob(pattern, root_dir=cwd)` does (fnmatch per
component, hidden names only for a component starting with `.`, links to directories
followed, `**` like `*`) but raises `GlobLimit` past `max_matches` matches or `max_entries`
directory entries looked at: a repository's links `a -> .`, `b -> .` made `*/*/.../*` take
3^N steps in ctxagent itself, where no timeout applies (break test 2026-12-02).
"""

from __future__ import annotations

import fnmatch
import glob
import os

MAX_ENTRIES = 100_000
"""Directory entries one pattern may look at (about 0.2 s of scandir)."""


class GlobLimit(Exception):
    """The pattern matched more than `max_matches` paths (`what` "matches") or looked at more
    than `max_entries` directory entries (`what` "entries")."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def bounded_glob(pattern: str, cwd: str, *, max_matches: int = 2000, max_entries: int = MAX_ENTRIES) -> list[str]:
    """The paths `pattern` matches, relative to `cwd` unless it is absolute, in no set order.
    Raises GlobLimit (see the module doc)."""
    parts = pattern.split("/")
    paths = ["/"] if pattern.startswith("/") else [""]
    if pattern.startswith("/"):
        parts = parts[1:]
    budget = [max_entries]
    for n, part in enumerate(parts):
        last = n == len(parts) - 1
        if part == "" or not glob.has_magic(part):
            paths = [_join(p, part) for p in paths]
            if part == "" and last:  # a trailing slash: directories only
                paths = [p for p in paths if os.path.isdir(os.path.join(cwd, p))]
            continue
        paths = [_join(p, name) for p in paths for name in _names(cwd, p, part, not last, budget)]
        if last and len(paths) > max_matches:
            raise GlobLimit("matches")
    if parts and parts[-1] and not glob.has_magic(parts[-1]):
        paths = [p for p in paths if os.path.lexists(os.path.join(cwd, p))]
    if len(paths) > max_matches:
        raise GlobLimit("matches")
    return paths


def _names(cwd: str, directory: str, part: str, dirs_only: bool, budget: list[int]) -> list[str]:
    """Names in `directory` matching the component `part` (`budget[0]`: entries left)."""
    hidden = part.startswith(".")
    out = []
    try:
        with os.scandir(os.path.join(cwd, directory) or ".") as entries:
            for entry in entries:
                budget[0] -= 1
                if budget[0] < 0:
                    raise GlobLimit("entries")
                if (entry.name.startswith(".") and not hidden) or not fnmatch.fnmatchcase(entry.name, part):
                    continue
                if dirs_only and not _is_dir(entry):
                    continue
                out.append(entry.name)
    except (OSError, ValueError):
        return []
    return out


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _join(head: str, name: str) -> str:
    if not head:
        return name
    return head + name if head.endswith("/") else head + "/" + name
