"""Which Python runs python_exec code: the repository's own when it has one.

Order: the configured `python` ([exec] python, trusted config only), `<repo>/.venv/bin/python`,
`<repo>/venv/bin/python`, else the interpreter running ctxagent (`sys.executable`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ctxagent.errors import ToolInputError

VENV_DIRS = (".venv", "venv")


def venv_bin(repo: Path) -> str | None:
    """`<repo>/.venv/bin` or `<repo>/venv/bin` when it holds an executable `python`, else None."""
    for name in VENV_DIRS:
        candidate = Path(repo) / name / "bin"
        if os.access(candidate / "python", os.X_OK):
            return str(candidate)
    return None


def find_python(repo: Path, configured: str = "") -> str:
    """The interpreter for `repo` (see module doc). Raises ToolInputError when the
    configured one is not an executable file."""
    if configured:
        path = Path(configured).expanduser()
        if not path.is_absolute():
            path = Path(repo) / path
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ToolInputError(f"python_exec: the configured interpreter {configured!r} ([exec] python) is "
                                 "not an executable file; fix the setting or remove it")
        return str(path)
    found = venv_bin(repo)
    return os.path.join(found, "python") if found else sys.executable
