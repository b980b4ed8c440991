"""An OS-level jail for the terminal tool, with bubblewrap (`bwrap`).

A new root showing only the system directories, the workspace and named extra paths, all
read-only; no network, private PIDs, a tmpfs scratch directory. A second wall behind the
allow-list; `jail_available()` tries it once per process and falls back silently
(docs/terminal.md, "How commands run").
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from typing import Callable, Iterable

from ctxagent.shell.programs import find_program

_lock = threading.Lock()
_available: bool | None = None

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
"""Directories shown read-only in the jail (programs, libraries, locale, passwd...)."""


def jail_prefix(*, workspace: str, cwd: str, scratch: str, scratch_bytes: int | None = None,
                extra_ro: Iterable[str] = ()) -> list[str]:
    """The bwrap argv to put before a program (ends with `--`). Needs `jail_available()`.

    workspace: shown read-only; cwd: where the program starts (inside the workspace); scratch: the one writable
    directory (with `scratch_bytes`, a fresh tmpfs of that many bytes, hiding what the host has there);
    extra_ro: more existing paths shown read-only (a program's directory outside SYSTEM_DIRS, a git directory).
    """
    bwrap = find_program("bwrap") or "bwrap"
    args = [bwrap, *_system_binds()]
    for path in sorted({workspace, *extra_ro} - {scratch}, key=len):
        args += ["--ro-bind", path, path]
    if scratch_bytes is None:
        args += ["--bind", scratch, scratch]
    else:
        args += ["--perms", "0700", "--size", str(scratch_bytes), "--tmpfs", scratch]
    args += ["--dev", "/dev", "--proc", "/proc", "--remount-ro", "/",
             "--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--chdir", cwd]
    if os.geteuid() == 0:
        args += ["--cap-drop", "ALL"]
    return args + ["--"]


def _system_binds() -> list[str]:
    """`--ro-bind` for each system directory, `--symlink` for the ones that are links
    (merged /usr: `/bin -> usr/bin`)."""
    args: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def outside_system_dirs(path: str) -> bool:
    """True when the real `path` is not under one of SYSTEM_DIRS (so the jail would not
    show it unless it is added with `extra_ro`)."""
    real = os.path.realpath(path)
    roots = [os.path.realpath(d) for d in SYSTEM_DIRS if os.path.exists(d)]
    return not any(real == root or real.startswith(root + os.sep) for root in roots)


def jail_available() -> bool:
    """True when bwrap is installed and a trial run of the jail succeeds (cached)."""
    global _available
    with _lock:
        if _available is None:
            _available = _probe()
        return _available


def _probe() -> bool:
    return bwrap_trial(lambda d: jail_prefix(workspace=d, cwd=d, scratch=d, scratch_bytes=1 << 20))


def bwrap_trial(make_prefix: Callable[[str], list[str]]) -> bool:
    """True when bwrap and `true` are found and `make_prefix(DIR) + [true]` exits 0 within
    10 s, DIR a fresh temporary folder (the jail's and the exec sandbox's probe)."""
    true = find_program("true")
    if find_program("bwrap") is None or true is None:
        return False
    with tempfile.TemporaryDirectory(prefix="ctxagent-bwrap-") as scratch:
        argv = make_prefix(scratch) + [true]
        try:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return False
    return proc.returncode == 0
