"""A git directory holds only its own files (issue 17 S3).

Before each git command the git directories are walked (no link followed) and the
repository refused for a link resolving outside them or a special file; alternates must
lie inside the workspace. The attacks and the cost: docs/terminal.md ("git hardening").
"""

from __future__ import annotations

import os
import stat

from ctxagent.errors import ToolRefusedError
from ctxagent.shell.paths import is_inside

MAX_ALTERNATE_DEPTH = 5
"""How deep git follows alternates of alternates (git's own limit)."""
_ALTERNATES_MAX_BYTES = 64 * 1024


def check_git_dirs(dirs: list[str], root: str) -> None:
    """Refuse (ToolRefusedError) unless every entry under each of `dirs` (real absolute
    git directories) is a regular file, a directory or a symbolic link resolving inside
    one of `dirs`, and every alternate object directory lies inside `root` or `dirs`."""
    tops = sorted(set(dirs), key=len)
    tops = [d for i, d in enumerate(tops) if not any(is_inside(d, t) for t in tops[:i])]
    for top in tops:
        _walk(top, tops)
    for top in tops:
        _check_alternates(os.path.join(top, "objects"), root, tops, 0)


def _walk(top: str, allowed: list[str]) -> None:
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif entry.is_symlink():
                _check_link(entry.path, top, allowed)
            elif not entry.is_file(follow_symlinks=False):
                raise _refusal(entry.path, top, f"is {_kind(entry.path)}, not a regular file")


def _check_link(path: str, top: str, allowed: list[str]) -> None:
    target = os.path.realpath(path)
    if not any(is_inside(target, d) for d in allowed):
        raise _refusal(path, top, "is a symbolic link leading outside the git directory")
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return  # dangling inside the git directory: git finds nothing there either
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise _refusal(path, top, f"is a symbolic link to {_kind(target)}, not a regular file")


def _kind(path: str) -> str:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "something unreadable"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _refusal(path: str, top: str, what: str) -> ToolRefusedError:
    rel = os.path.join(os.path.basename(top), os.path.relpath(path, top))
    return ToolRefusedError(
        f"git: {rel} {what}; git would read it, so git is not allowed in this repository "
        f"(a repository git made has none); replace it with a regular file or remove it")


def _check_alternates(objects: str, root: str, tops: list[str], depth: int) -> None:
    """Each object directory listed in `objects`/info/alternates (relative ones from
    `objects`, as git resolves them) must resolve inside `root` or `tops`; one that lies
    elsewhere in the workspace is walked like the git directories."""
    if depth >= MAX_ALTERNATE_DEPTH:
        return
    for line in _read_alternates(os.path.join(objects, "info", "alternates"), [root, *tops]):
        for spelling in {line, _unquote(line)}:
            target = os.path.realpath(os.path.join(objects, spelling))
            if not any(is_inside(target, d) for d in (root, *tops)):
                raise ToolRefusedError(
                    "git: objects/info/alternates lists an object directory outside the workspace, "
                    "so git would read another repository's objects; git is not allowed here. To make "
                    "the repository self-contained: `git repack -a -d`, then delete objects/info/alternates")
            if not any(is_inside(target, d) for d in tops):
                _walk(target, [target, *tops])
            _check_alternates(target, root, tops, depth + 1)


def _read_alternates(path: str, allowed: list[str]) -> list[str]:
    """The non-comment lines of an alternates file ([] when missing). It must resolve
    inside `allowed` and be a regular file (opened without following a last link)."""
    real = os.path.realpath(path)
    if not any(is_inside(real, d) for d in allowed):
        raise ToolRefusedError("git: an objects/info/alternates file leads outside the workspace; "
                               "git is not allowed here")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return []
    except OSError:
        raise ToolRefusedError("git: an objects/info/alternates file could not be opened as a regular file "
                               "(a symbolic link?); git is not allowed here") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ToolRefusedError("git: an objects/info/alternates is not a regular file; git is not allowed here")
        data = f.read(_ALTERNATES_MAX_BYTES)
    lines = data.decode("utf-8", errors="surrogateescape").split("\n")
    return [line for line in lines if line and not line.startswith("#")]


def _unquote(line: str) -> str:
    """git's C-style unquoting of a line in double quotes (`"a\\tb"`, octal bytes);
    other lines unchanged."""
    if len(line) < 2 or not (line.startswith('"') and line.endswith('"')):
        return line
    body = line[1:-1].encode("utf-8", errors="surrogateescape")
    simple = {ord(k): ord(v) for k, v in
              {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
               "\\": "\\", '"': '"'}.items()}
    out, i = bytearray(), 0
    while i < len(body):
        if body[i] == ord("\\") and i + 1 < len(body):
            digits = body[i + 1:i + 4]
            if body[i + 1] in simple:
                out.append(simple[body[i + 1]])
                i += 2
                continue
            if len(digits) == 3 and all(ord("0") <= c <= ord("7") for c in digits):
                out.append(int(digits, 8) & 0xFF)
                i += 4
                continue
        out.append(body[i])
        i += 1
    return out.decode("utf-8", errors="surrogateescape")
