"""What the terminal shows of a tool result: the lines that matter, folded when long.

A failed or refused call shows its whole message (every line, up to FOLD lines); a patch
its per-file summary (`M src/app.py (+2 -1)`, one file a line, without the "Patch
applied" header); a todo change or a plan its board; any other result its first line
and `(+N lines)`. Long texts keep their first FOLD lines and end with `... +N lines`.
The text given must already be clean (`RichRenderer._clean`). Reference: docs/cli.md.
"""

from __future__ import annotations

from typing import Callable

#: Most lines of one result (or an auto-approved diff) shown before `... +N lines`.
FOLD = 40
#: Characters of a one-line result shown.
SHORT = 100

Shaper = Callable[[list[str]], list[str]]


def fold(lines: list[str], limit: int = FOLD) -> list[str]:
    """`lines` up to `limit`, then one `... +N lines` line for the rest (N >= 2: one more line
    is shown, not folded)."""
    if len(lines) <= limit + 1:
        return lines
    return [*lines[:limit], f"... +{len(lines) - limit} lines"]


def cut(text: str, limit: int = SHORT) -> str:
    """`text` cut to `limit` characters, ending with `…` when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _patch(lines: list[str]) -> list[str]:
    body = lines[1:] if lines[0].startswith("Patch applied") and len(lines) > 1 else lines
    return fold(body)


def _board(lines: list[str]) -> list[str]:
    if lines[0].startswith("todo board"):  # a listing, not a change: one line
        return _one_line(lines)
    return fold(lines)


def _one_line(lines: list[str]) -> list[str]:
    more = "" if len(lines) == 1 else "  (+1 line)" if len(lines) == 2 else f"  (+{len(lines) - 1} lines)"
    return [cut(lines[0]) + more]


#: Tools whose successful result shows more than its first line.
SHAPERS: dict[str, Shaper] = {"apply_patch": _patch, "todo": _board, "plan": fold}


def result_lines(name: str, ok: bool, content: str) -> list[str]:
    """The lines to show for a result of tool `name` (`ok`: it succeeded), never empty."""
    lines = content.strip("\n").split("\n")
    while len(lines) > 1 and not lines[-1].strip():
        lines.pop()
    if not ok:
        return fold(lines)
    return SHAPERS.get(name, _one_line)(lines)
