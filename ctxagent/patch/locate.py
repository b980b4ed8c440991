"""Locate an update's chunks in a file's lines and compute the new lines. Pure.

Chunks are searched in order, each after the previous; several places is ambiguous (case
P03); anchors are searched first; context keeps the file's text; the final newline rules
are P02a/P02b. Rules: docs/patch.md ("Locating hunks", "Module notes").
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Sequence

from ctxagent.errors import PatchError
from ctxagent.patch import hint
from ctxagent.patch.model import Chunk
from ctxagent.patch.seek import seek_sequence


@dataclass(frozen=True)
class Edit:
    """Result of applying an update's chunks: new lines, final newline, line counts."""

    lines: list[str]
    final_newline: bool
    added: int
    removed: int


def locate_chunks(lines: Sequence[str], chunks: Sequence[Chunk], path: str) -> list[int]:
    """0-based start index of every chunk (insertion point for chunks without old lines).

    Raises PatchError(path=, hunk=) when a chunk is not found or is ambiguous.
    """
    starts = []
    cursor = 0
    for number, chunk in enumerate(chunks, 1):
        start = _locate(lines, chunk, cursor, path, number)
        starts.append(start)
        cursor = start + len(chunk.old_lines)
    return starts


def _locate(lines: Sequence[str], chunk: Chunk, cursor: int, path: str, number: int) -> int:
    what = f"hunk {number}"
    if chunk.context_anchor is None:
        if not chunk.old_lines:
            return len(lines)
        places = seek_sequence(lines, chunk.old_lines, cursor, chunk.end_of_file)
    else:
        places = _after_anchor(lines, chunk, cursor, path, number)
        what = f"hunk {number} (after '@@ {chunk.context_anchor}')"
    if not places:
        message = hint.not_found(lines, chunk.old_lines, path, what)
        earlier = seek_sequence(lines, chunk.old_lines, 0, False) if cursor else []
        if earlier and earlier[0] < cursor:
            message = (f"{what} of {path} matches line {earlier[0] + 1}, before the end of the "
                       "previous hunk: hunks of one file must be in file order and must not overlap.")
        raise PatchError("apply_patch: " + message, path=path, hunk=number)
    if len(places) > 1:
        raise PatchError("apply_patch: " + hint.ambiguous(lines, places, path, what), path=path, hunk=number)
    return places[0]


def _after_anchor(lines: Sequence[str], chunk: Chunk, cursor: int, path: str, number: int) -> list[int]:
    anchor = chunk.context_anchor or ""
    anchors = seek_sequence(lines, [anchor], cursor, False)
    if not anchors:
        what = f"the '@@ {anchor}' anchor line of hunk {number}"
        raise PatchError("apply_patch: " + hint.not_found(lines, [anchor], path, what), path=path, hunk=number)
    if not chunk.old_lines:
        return [a + 1 for a in anchors]
    places: list[int] = []
    for a in anchors:
        found = seek_sequence(lines, chunk.old_lines, a, chunk.end_of_file)
        if found and found[0] not in places:
            places.append(found[0])
    return places


def apply_chunks(lines: Sequence[str], final_newline: bool, chunks: Sequence[Chunk], path: str) -> Edit:
    """Locate every chunk, then build the new lines. Raises PatchError (nothing changes)."""
    starts = locate_chunks(lines, chunks, path)
    out: list[str] = []
    origin: list[int | None] = []  # index in `lines` of each kept line, None for new ones
    pos = added = removed = 0
    for start, chunk in zip(starts, chunks):
        out.extend(lines[pos:start])
        origin.extend(range(pos, start))
        a, r = _merge(lines, start, chunk, out, origin)
        added, removed = added + a, removed + r
        pos = start + len(chunk.old_lines)
    out.extend(lines[pos:])
    origin.extend(range(pos, len(lines)))
    kept_end = bool(lines) and bool(origin) and origin[-1] == len(lines) - 1
    return Edit(out, final_newline if kept_end else True, added, removed)


def _merge(lines: Sequence[str], start: int, chunk: Chunk, out: list[str], origin: list[int | None]) -> tuple[int, int]:
    """Append the chunk's new lines, keeping the file's text for unchanged lines."""
    old, new = chunk.old_lines, chunk.new_lines
    added = removed = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            out.extend(lines[start + i1:start + i2])
            origin.extend(range(start + i1, start + i2))
            continue
        out.extend(new[j1:j2])
        origin.extend([None] * (j2 - j1))
        added, removed = added + j2 - j1, removed + i2 - i1
    return added, removed


def count_changes(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    """(added, removed) line counts between two versions of a file (difflib opcodes)."""
    added = removed = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            added, removed = added + j2 - j1, removed + i2 - i1
    return added, removed
