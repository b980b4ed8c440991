"""Paths of the terminal tool: every path argument must resolve inside the workspace.

`PathContext` holds the workspace root and the tool's current directory (both resolved
with `os.path.realpath`, so symbolic links count where they lead). It checks path
arguments and expands unquoted globs the way a shell would (sorted matches, hidden files
only when the pattern asks for them, the pattern itself when nothing matches).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from ctxagent.errors import ToolRefusedError
from ctxagent.shell.globbing import MAX_ENTRIES, GlobLimit, bounded_glob
from ctxagent.shell.parse import Word

MAX_GLOB_MATCHES = 2000
"""A glob expanding to more words than this is refused (ask for a narrower pattern)."""


def is_inside(path: str, root: str) -> bool:
    """True when the resolved `path` is `root` or below it (both absolute, resolved)."""
    if root == os.sep:
        return True
    return path == root or path.startswith(root + os.sep)


@dataclass
class PathContext:
    """The workspace root and current directory, both absolute and resolved.

    `cwd` is always inside `root`; the tool's `cd` is the only thing that changes it.
    """

    root: str
    cwd: str

    def resolve(self, text: str) -> str:
        """The real absolute path `text` names, relative to `cwd` (symlinks resolved)."""
        return os.path.realpath(os.path.join(self.cwd, text))

    def check_path(self, cmd: str, text: str, *, read: bool = False) -> None:
        """Refuse `text` unless it resolves inside the workspace (and, with `read`, is no FIFO,
        socket or device: `check_readable`). `-` (stdin) is fine. Raises ToolRefusedError
        naming the path, where it leads and what is allowed."""
        if text == "-":
            return
        full = self.resolve(text)
        if not is_inside(full, self.root):
            shown = "" if full == text else f" (it resolves to {full})"
            raise ToolRefusedError(
                f"{cmd}: the path {text!r} is not allowed (it is outside the workspace{shown}); "
                f"use paths inside {self.root}, relative to the current directory or absolute"
            )
        if read:
            self.check_readable(cmd, text)

    def check_readable(self, cmd: str, text: str) -> None:
        """Refuse reading `text` when it is a FIFO, a socket or a device: the read would wait
        for a writer (or never end) until the command's timeout. A missing path is the
        program's to report. Raises ToolRefusedError naming the path and its kind."""
        try:
            mode = os.stat(self.resolve(text)).st_mode
        except OSError:
            return
        kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else None)
        if kind is not None:
            raise ToolRefusedError(
                f"{cmd}: {text!r} is {kind}: reading it waits for a writer until the command times out, so it "
                f"is not read; `ls -l` or `stat` show what it is, and a regular file can be read")

    def expand(self, cmd: str, word: Word, *, read: bool = False) -> list[str]:
        """Shell-style glob expansion of a path operand; each match is `check_path`ed (with
        `read`). A match starting with `-` gets a `./` prefix (never taken for a flag). Raises
        ToolRefusedError for a path outside the workspace or past MAX_GLOB_MATCHES matches.
        """
        if word.glob is None:
            self.check_path(cmd, word.text, read=read)
            return [word.text]
        if not is_inside(self.resolve(_fixed_prefix(word.glob)), self.root):
            raise ToolRefusedError(
                f"{cmd}: the pattern {word.text!r} is not allowed (its directory is outside the "
                f"workspace); use paths inside {self.root}"
            )
        if _dotdot_after_wildcard(word.glob):
            raise ToolRefusedError(
                f"{cmd}: the pattern {word.text!r} is not allowed (a `..` after a wildcard could "
                f"walk out of the workspace); write the directory without `..`, e.g. from {self.root}"
            )
        try:
            matches = sorted(bounded_glob(word.glob, self.cwd, max_matches=MAX_GLOB_MATCHES))
        except GlobLimit as exc:
            what = (f"matches more than {MAX_GLOB_MATCHES} paths" if exc.what == "matches" else
                    f"looks at more than {MAX_ENTRIES:,} directory entries (symbolic links that loop?)")
            raise ToolRefusedError(f"{cmd}: the pattern {word.text!r} {what}; use a narrower pattern or a "
                                   "directory with -r/find") from None
        if not matches:
            self.check_path(cmd, word.text, read=read)
            return [word.text]
        if any(not is_inside(self.resolve(m), self.root) for m in matches):
            # name the pattern only: a match (or where it leads) is outside (issue 17 S10)
            raise ToolRefusedError(
                f"{cmd}: the pattern {word.text!r} is not allowed (it matches paths outside the "
                f"workspace, through a symlink); use paths inside {self.root}"
            )
        out = []
        for match in matches:
            self.check_path(cmd, match, read=read)
            out.append("./" + match if match.startswith("-") else match)
        return out


def _dotdot_after_wildcard(pattern: str) -> bool:
    """True when a `..` component follows a component with a wildcard (issue 17 S10:
    `*/../../outside/*` is checked only up to its first wildcard)."""
    wild = False
    for part in pattern.split("/"):
        if wild and part == "..":
            return True
        wild = wild or any(ch in part for ch in "*?[")
    return False


def _fixed_prefix(pattern: str) -> str:
    """The directory part of a glob pattern before its first wildcard ('.' if none)."""
    cut = len(pattern)
    for ch in "*?[":
        i = pattern.find(ch)
        if i >= 0:
            cut = min(cut, i)
    head = pattern[:cut]
    return os.path.dirname(head) or ("/" if pattern.startswith("/") else ".")
