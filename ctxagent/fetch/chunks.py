"""Split a source file into definition chunks, the finer granularity of the file ranking.

A chunk runs from one definition line (or Markdown heading) to the next; text before the
first is a chunk; chunks over `MAX_CHUNK_LINES` are windowed. Pure functions of text.
Why regexes and not a parser: docs/context-fetch.md ("Module notes").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Chunks longer than this many lines are cut into windows of WINDOW_LINES.
MAX_CHUNK_LINES = 150
WINDOW_LINES = 60

_MODIFIERS = r"(?:(?:export|default|public|private|protected|internal|static|async|abstract|final|override|pub(?:\([^)]*\))?|unsafe|extern)\s+)*"
_DEF_RE = re.compile(
    rf"^(?P<indent>[ \t]*){_MODIFIERS}"
    r"(?P<kind>def|class|function\*?|func|fn|interface|struct|enum|trait|impl|module|object)\s+"
    r"(?:\([^)]*\)\s*)?"  # Go method receiver: func (r *Reader) Read(
    r"(?P<name>[A-Za-z_$][\w$]*)"
)
_HEADING_RE = re.compile(r"^(?P<indent>)(?P<kind>#{1,6})\s+(?P<name>\S.*?)\s*#*\s*$")
_CONTAINERS = frozenset({"class", "interface", "struct", "enum", "trait", "impl", "module", "object"})


@dataclass(frozen=True)
class Chunk:
    """Lines [start, end) of a file (0-based, end exclusive).

    `name`: the definition's name ("" for the preamble); `parent`: the enclosing class
    (or other container) name, "" at top level.
    """

    start: int
    end: int
    name: str = ""
    parent: str = ""


def _definitions(lines: list[str], markdown: bool) -> list[tuple[int, int, str, str]]:
    """(line index, indent width, kind, name) of every definition line."""
    pattern = _HEADING_RE if markdown else _DEF_RE
    out = []
    for i, line in enumerate(lines):
        match = pattern.match(line)
        if match:
            kind = match.group("kind")
            indent = len(kind) if markdown else len(match.group("indent").expandtabs(4))
            out.append((i, indent, kind, match.group("name")))
    return out


def split_chunks(text: str, *, markdown: bool = False) -> list[Chunk]:
    """Definition chunks of `text` covering every line once, in order.

    `markdown`: split at `#` headings instead of code definitions.
    Returns at least one chunk for non-empty text.
    """
    lines = text.split("\n")
    defs = _definitions(lines, markdown)
    chunks: list[Chunk] = []
    if not defs or defs[0][0] > 0:
        chunks.append(Chunk(0, defs[0][0] if defs else len(lines)))
    containers: list[tuple[int, str]] = []
    for j, (start, indent, kind, name) in enumerate(defs):
        end = defs[j + 1][0] if j + 1 < len(defs) else len(lines)
        while containers and containers[-1][0] >= indent:
            containers.pop()
        parent = containers[-1][1] if containers else ""
        if markdown or kind in _CONTAINERS:
            containers.append((indent, name))
        chunks.append(Chunk(start, end, name, parent))
    return [piece for chunk in chunks for piece in _windows(chunk)]


def _windows(chunk: Chunk) -> list[Chunk]:
    if chunk.end - chunk.start <= MAX_CHUNK_LINES:
        return [chunk]
    return [Chunk(s, min(s + WINDOW_LINES, chunk.end), chunk.name, chunk.parent)
            for s in range(chunk.start, chunk.end, WINDOW_LINES)]
