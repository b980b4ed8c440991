"""The parsed form of a patch: plain dataclasses, no behaviour.

A patch is an ordered list of operations. Each operation names a workspace-relative
path exactly as written in the patch (validation happens later, in `apply.py`).
Line lists hold line *contents* without line endings; the file's own line ending,
encoding and final newline are decided by `textfile.py` when the file is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class AddFile:
    """`*** Add File: <path>` followed by `+` lines. The new file ends with a newline
    (unless `lines` is empty, which creates an empty file) and uses LF line endings."""

    path: str
    lines: list[str]


@dataclass(frozen=True)
class DeleteFile:
    """`*** Delete File: <path>`. The file must exist."""

    path: str


@dataclass(frozen=True)
class Chunk:
    """One `@@` hunk: `context_anchor` (text after `@@ `, a line before `old_lines`; None for a bare
    `@@`), `old_lines` (the ` `/`-` lines), `new_lines` (the ` `/`+` lines), `end_of_file` (closed
    by `*** End of File`: looked for at the end first). Invariant: old_lines != new_lines."""

    context_anchor: str | None
    old_lines: list[str]
    new_lines: list[str]
    end_of_file: bool = False


@dataclass(frozen=True)
class UpdateFile:
    """`*** Update File: <path>` (+ optional `*** Move to:`) and its hunks: `chunks` in file order
    (each searched after the previous), or `replace_lines` when the body was the whole new file
    without prefixes (see `parser.py`). A pure rename has `move_to` and no chunks."""

    path: str
    move_to: str | None = None
    chunks: list[Chunk] = field(default_factory=list)
    replace_lines: list[str] | None = None


Operation = AddFile | DeleteFile | UpdateFile


@dataclass(frozen=True)
class Patch:
    """A parsed patch: at least one operation, applied in order, all or nothing."""

    ops: list[Operation]
