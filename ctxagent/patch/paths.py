"""Resolve a path named in a patch to a file inside the workspace, or refuse it.

A patch path must be relative, use `/` separators, contain no NUL byte, have no name
longer than 255 bytes (NAME_MAX) nor be longer than 4095 bytes (PATH_MAX), and stay in the
workspace after `..` and symlinks are resolved (`os.path.realpath`). Nothing under a
`.git` folder (at any depth: the repository's own metadata, case P06) or under
`.ctxagent/` (ctxagent's own state and backups) may be touched, whether named directly
or reached through a symlink. Case P05.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

from ctxagent.errors import PatchError

#: Folder names a patch may never write into (compared case-insensitively).
PROTECTED_DIRS = (".git", ".ctxagent")

_DRIVE = re.compile(r"^[A-Za-z]:")
#: Longest file or folder name, in bytes (NAME_MAX of Linux, macOS and Windows file systems).
NAME_MAX = 255
#: Longest path, in bytes (Linux PATH_MAX, including the terminating NUL: 4096 - 1).
PATH_MAX = 4095


def workspace_root(workspace: Path | str) -> Path:
    """The workspace's real path. Raises PatchError if it is not an existing folder."""
    root = Path(os.path.realpath(workspace))
    if not root.is_dir():
        raise PatchError(f"workspace {workspace} is not an existing folder")
    return root


def resolve(root: Path, raw: str) -> tuple[str, Path]:
    """(workspace-relative POSIX path, absolute real path) of `raw`, symlinks resolved.

    `root` must come from `workspace_root`. Raises PatchError(path=raw) naming the rule
    that was broken.
    """
    norm = _lexical(raw)
    size = len(os.fsencode(str(root / norm)))
    if size > PATH_MAX:
        raise _refuse(raw, f"would be {size} bytes long inside the workspace: path too long "
                      f"(max {PATH_MAX} bytes)")
    real = Path(os.path.realpath(root / norm))
    try:
        rel = real.relative_to(root).as_posix()
    except ValueError:
        raise _refuse(raw, f"resolves to {real}, outside the workspace (through a symlink)") from None
    if rel in ("", "."):
        raise _refuse(raw, "names the workspace folder itself, not a file")
    _check_protected(raw, rel)
    return rel, real


def _lexical(raw: str) -> str:
    if "\x00" in raw:
        raise _refuse(raw, "contains a NUL byte")
    if raw.startswith(("/", "\\", "~")) or _DRIVE.match(raw):
        raise _refuse(raw, "is absolute; use a path relative to the workspace root, e.g. src/app.py")
    if raw.endswith("/"):
        raise _refuse(raw, "ends with '/'; name a file, not a folder")
    if "\\" in raw:
        raise _refuse(raw, "contains '\\'; separate folders with '/'")
    norm = posixpath.normpath(raw)
    _check_lengths(raw, norm)
    if norm == ".." or norm.startswith("../"):
        raise _refuse(raw, "leaves the workspace through '..'; use a path inside the workspace")
    if norm in ("", "."):
        raise _refuse(raw, "names the workspace folder itself, not a file")
    _check_protected(raw, norm)
    return norm


def _check_lengths(raw: str, norm: str) -> None:
    """Refuse a file or folder name over NAME_MAX bytes (UTF-8) before anything touches
    the disk (breaker F6); `resolve` checks the whole path against PATH_MAX."""
    for part in norm.split("/"):
        size = len(os.fsencode(part))
        if size > NAME_MAX:
            shown = part if len(part) <= 40 else f"{part[:20]}...{part[-12:]}"
            raise _refuse(raw, f"has a file or folder name of {size} bytes ({shown!r}): file name too long "
                          f"(max {NAME_MAX} bytes per component)")


def is_symlink(root: Path, raw: str) -> bool:
    """True when the path named in the patch is itself a symbolic link (not its folders)."""
    return os.path.islink(root / posixpath.normpath(raw))


def first_symlink(root: Path, raw: str) -> str | None:
    """The first part of `raw` (a folder or the file itself, as named) that is a symbolic
    link, or None: a name that a move or an Add File would create through a link (S16)."""
    parts = posixpath.normpath(raw).split("/")
    for n in range(1, len(parts) + 1):
        named = "/".join(parts[:n])
        if os.path.islink(root / named):
            return named
    return None


def _check_protected(raw: str, rel: str) -> None:
    for part in rel.split("/"):
        if part.casefold() in PROTECTED_DIRS:
            raise _refuse(raw, f"is inside '{part}/', which patches may not change")


def check_parents(root: Path, real: Path, raw: str) -> None:
    """Refuse creating `real` when one of its existing ancestors is not a folder."""
    parent = real.parent
    while parent != root and not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise _refuse(raw, f"cannot be created: {parent.relative_to(root).as_posix()} is a file, not a folder")


def _refuse(raw: str, why: str) -> PatchError:
    return PatchError(f"apply_patch: refused path {raw!r}: it {why}. Nothing was changed.", path=raw)
