"""Where a printed line may break: at word boundaries on a terminal, nowhere elsewhere.

On a terminal rich wraps prose at words to the window's width (a line left to the terminal
breaks mid-word: `the session is kept, send a new me` / `ssage`); into a file or a pipe each
line stays whole, for grep and for scripts. Commands to copy stay whole everywhere.
"""

from __future__ import annotations

from rich.console import Console


def soft(console: Console) -> bool:
    """The `soft_wrap` for prose printed on `console`: False on a terminal (rich wraps at
    words), True elsewhere (the line is written whole)."""
    return not console.is_terminal
