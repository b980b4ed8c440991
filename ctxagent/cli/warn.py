"""Python warnings from ctxagent's own code, shown to CLI users as one clean line.

`cli_warnings()` (installed by `run_cli`) and `warning_line` print `warning: <message>`
on stderr with control characters visible (breaker report F12). Why: docs/cli.md
("Module notes").
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from typing import IO, Any, Iterator

from ctxagent.cli.safe_text import one_line


def warning_line(message: Any) -> str:
    """`warning: <message>` on one line (message lines joined, controls made visible)."""
    return f"warning: {one_line(str(message))}"


def show_warning(message: Any, category: type[Warning], filename: str, lineno: int,
                 file: IO[str] | None = None, line: str | None = None) -> None:
    """A `warnings.showwarning` replacement: `warning_line(message)` on stderr (or `file`),
    without the file name, line number, category or source line."""
    stream = file if file is not None else sys.stderr
    if stream is None:  # pythonw / detached: nowhere to show it
        return
    try:
        stream.write(warning_line(message) + "\n")
        stream.flush()
    except (OSError, ValueError):  # a closed or broken stderr must not turn a warning into a crash
        pass


@contextlib.contextmanager
def cli_warnings() -> Iterator[None]:
    """Within the block, warnings are shown by `show_warning`, each distinct message once
    (a file read twice in one command warns once); the previous handler and filters
    come back after."""
    shown: set[str] = set()

    def once(message: Any, category: type[Warning], filename: str, lineno: int,
             file: IO[str] | None = None, line: str | None = None) -> None:
        if str(message) not in shown:
            shown.add(str(message))
            show_warning(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = once
        yield
