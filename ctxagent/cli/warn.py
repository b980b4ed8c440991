"""Python warnings from ctxagent's own code, shown to CLI users as one clean line.

The storage layer reports what it recovered from with `warnings.warn` (a corrupt
`todos.json` set aside, the notes index rebuilt, a note whose YAML front matter does
not parse skipped). Python's default display prints `file.py:207: UserWarning: ...`
and the source line; a parser message may span several lines. In the CLI every
warning is instead one line on stderr, `warning: <message>`, with control characters
made visible (breaker report F12). `ctxagent.cli.main.run_cli` installs the handler
for the whole command (`cli_warnings()`); `state_common.run_tool` uses `warning_line`.
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
