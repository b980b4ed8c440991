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
    """One `@@` hunk of an update.

    context_anchor: text after `@@ ` (a line that must appear before `old_lines`,
        used to disambiguate), or None for a bare `@@`.
    old_lines: the ` ` and `-` lines in order (what the file must contain).
    new_lines: the ` ` and `+` lines in order (what replaces them).
    end_of_file: True when the hunk was closed by `*** End of File`: `old_lines` are
        looked for at the very end of the file first.
    Invariant: old_lines != new_lines (a hunk that changes nothing is a parse error).
    """

    context_anchor: str | None
    old_lines: list[str]
    new_lines: list[str]
    end_of_file: bool = False


@dataclass(frozen=True)
class UpdateFile:
    """`*** Update File: <path>` (+ optional `*** Move to: <path>`) and its hunks.

    chunks: the hunks in file order (each is searched after the previous one).
    replace_lines: set instead of `chunks` when the body was the whole new file
        written without ` `/`+`/`-` prefixes (a common model habit): the file's
        content is replaced by these lines. See `parser.py` for the exact rule.
    A pure rename has `move_to` set and no chunks.
    """

    path: str
    move_to: str | None = None
    chunks: list[Chunk] = field(default_factory=list)
    replace_lines: list[str] | None = None


Operation = AddFile | DeleteFile | UpdateFile


@dataclass(frozen=True)
class Patch:
    """A parsed patch: at least one operation, applied in order, all or nothing."""

    ops: list[Operation]
