"""Open what was checked: file operands of `cat`, `nl`, `head`, `tail` passed as open descriptors (issue 17 S14).

Each file is opened one component at a time from the workspace root with O_NOFOLLOW and
given as `/dev/fd/N`, where the name never shows in the output; directories, FIFOs and
operands past MAX_PINNED stay names (docs/terminal.md, "Limits and lookups").
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat

from ctxagent.errors import ToolRefusedError
from ctxagent.shell.flags import scan
from ctxagent.shell.parse import Word
from ctxagent.shell.paths import PathContext, is_inside
from ctxagent.shell.specs import SPECS

PINNED = ("cat", "nl", "head", "tail")
_ALL_OPERANDS = ("cat", "nl")
MAX_PINNED = 256
"""Descriptors opened per command at most (the soft RLIMIT_NOFILE is often 1024); the
operands after that stay names."""
_VERBOSE = {"-v", "--verbose"}


def pin_reads(argv: list[str], ctx: PathContext) -> tuple[list[str], list[int]]:
    """(argv with pinned operands replaced by `/dev/fd/N`, the descriptors to pass and
    close after the run). Raises ToolRefusedError when a path changed since its check."""
    name = argv[0]
    if name not in PINNED:
        return argv, []
    result = scan(name, SPECS[name], [Word(text) for text in argv[1:]], ctx)
    operands = [i for i in result.operands if result.words[i] != "-"]
    if name not in _ALL_OPERANDS and (len(result.operands) != 1 or result.has(_VERBOSE)):
        return argv, []
    out, fds = list(argv), []
    try:
        for i in operands[:MAX_PINNED]:
            fd = open_checked(ctx, result.words[i])
            if fd is not None:
                fds.append(fd)
                out[i + 1] = f"/dev/fd/{fd}"
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return out, fds


def open_checked(ctx: PathContext, text: str) -> int | None:
    """A read-only descriptor of the regular file `text` names, opened component by
    component from the workspace root without following links; None when it is not a
    regular file or cannot be opened. Raises ToolRefusedError when it leads outside."""
    if text.endswith("/"):
        return None  # `cat a.txt/` fails for the program; a resolved path would not
    real = ctx.resolve(text)
    if not is_inside(real, ctx.root):
        raise _changed(text)
    parts = [p for p in os.path.relpath(real, ctx.root).split(os.sep) if p not in ("", ".")]
    if not parts:
        return None
    try:
        folder = os.open(ctx.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            nxt = os.open(part, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
            os.close(folder)
            folder = nxt
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC,
                     dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and _has_link(ctx.root, parts)):
            raise _changed(text) from None
        return None  # missing, not a directory, no permission: the program says so itself
    finally:
        os.close(folder)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


def _has_link(root: str, parts: list[str]) -> bool:
    """Whether a component of root/parts is now a symbolic link (it was not when resolved)."""
    path = root
    for part in parts:
        path = os.path.join(path, part)
        if os.path.islink(path):
            return True
    return False


def _changed(text: str) -> ToolRefusedError:
    return ToolRefusedError(
        f"terminal: the path {text!r} is not allowed (it changed while being checked: a symbolic link "
        f"appeared on its way, which may lead outside the workspace); run the command again")
