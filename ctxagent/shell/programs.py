"""Where helper programs are found: never on the user's PATH (issue 17, S4).

A repository can ship `node_modules/.bin/bwrap` or `.venv/bin/rg`; a lookup on the
PATH of the user's shell would run it as the user. System helpers (bwrap, true, git,
cat...) are looked up on SAFE_PATH only; ripgrep comes first from ctxagent's own
environment (the `ripgrep` wheel puts `rg` next to the interpreter, issue 10), found
even when that environment is not activated.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
"""The only PATH commands see (and the only place system programs are looked up)."""

_OWN_PROGRAMS = ("rg",)


def own_bin_dirs() -> list[str]:
    """Script directories of the running Python environment (sysconfig, then the
    directory of sys.executable), without duplicates."""
    dirs = []
    for path in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        if path and path not in dirs:
            dirs.append(path)
    return dirs


def find_program(name: str) -> str | None:
    """Absolute path of helper `name`, or None. rg: ctxagent's environment first, then
    SAFE_PATH; every other program: SAFE_PATH only. `name` must be a bare name."""
    if os.sep in name:
        return None
    if name in _OWN_PROGRAMS:
        found = shutil.which(name, path=os.pathsep.join(own_bin_dirs()))
        if found:
            return found
    return shutil.which(name, path=SAFE_PATH)


def find_rg() -> str | None:
    """Path of the ripgrep binary (ctxagent's environment, then SAFE_PATH), or None."""
    return find_program("rg")
