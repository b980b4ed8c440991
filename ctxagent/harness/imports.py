"""`@path` imports in AGENTS.md-chain files, as CLAUDE.md and GEMINI.md write them.

`@path` at the start of a line or after white space names a file (relative to the file
holding it, or `~/...`); it is replaced by that file's text between `<!-- Imported from:
P -->` and `<!-- End of import from: P -->` lines. Not inside code spans or fenced code
blocks; nested imports up to MAX_DEPTH levels. A cycle, a deeper import, or a path that
resolves outside `root` (symbolic links included) is refused with a note in the text. A
`@word` that names no file (a mention, a decorator) is left alone.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ctxagent.harness.files import read_text

#: Levels of nested imports followed (Claude Code's limit).
MAX_DEPTH = 5
_IMPORT = re.compile(r"(?<!\S)@((?:~/|\.{1,2}/|/)?[^\s`@]+)")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_TRAILING = ".,;:!?)]}'\""


def expand_imports(text: str, source: Path, root: Path, *, home: Path | None = None) -> tuple[str, list[str]]:
    """`text` (the contents of `source`) with its imports expanded, and notes for each
    refused import. `root`: imports must resolve inside it. `home`: what `~` means."""
    notes: list[str] = []
    real = os.path.realpath(source)
    out = _expand(text, Path(source), os.path.realpath(root), home, (real,), notes)
    return out, notes


def _expand(text: str, source: Path, root: str, home: Path | None, stack: tuple[str, ...],
            notes: list[str]) -> str:
    lines, fenced = [], None
    for line in text.split("\n"):
        fence = _FENCE.match(line)
        if fence:
            fenced = None if fenced == fence.group(1) else (fenced or fence.group(1))
            lines.append(line)
        elif fenced or "@" not in line:
            lines.append(line)
        else:
            lines.append(_line(line, source, root, home, stack, notes))
    return "\n".join(lines)


def _line(line: str, source: Path, root: str, home: Path | None, stack: tuple[str, ...], notes: list[str]) -> str:
    parts = line.split("`")
    for i in range(0, len(parts), 2):  # even parts are outside code spans
        parts[i] = _IMPORT.sub(lambda m: _one(m.group(1), source, root, home, stack, notes) or m.group(0), parts[i])
    return "`".join(parts)


def _one(raw: str, source: Path, root: str, home: Path | None, stack: tuple[str, ...], notes: list[str]) -> str | None:
    """The replacement for `@raw`, or None to leave it as written."""
    name = raw.rstrip(_TRAILING) or raw
    for candidate in dict.fromkeys((raw, name)):
        path = _resolve(candidate, source, home)
        if path is not None and os.path.isfile(path):
            return _inline(candidate, path, raw[len(candidate):], root, home, stack, notes)
    return None


def _resolve(name: str, source: Path, home: Path | None) -> Path | None:
    if name.startswith("~/"):
        return None if home is None else Path(home) / name[2:]
    return Path(name) if name.startswith("/") else source.parent / name


def _inline(name: str, path: Path, tail: str, root: str, home: Path | None, stack: tuple[str, ...],
            notes: list[str]) -> str:
    real = os.path.realpath(path)
    refusal = None
    if os.path.commonpath([real, root]) != root:
        refusal = f"@{name} refused: it is outside the workspace ({root})"
    elif real in stack:
        refusal = f"@{name} refused: it imports itself (a cycle: {' -> '.join(Path(p).name for p in (*stack, real))})"
    elif len(stack) > MAX_DEPTH:
        refusal = f"@{name} refused: imports go at most {MAX_DEPTH} levels deep"
    if refusal is not None:
        notes.append(f"{stack[-1]}: {refusal}")
        return f"[{refusal}]{tail}"
    got = read_text(path)
    if got is None:
        return f"@{name}{tail}"
    inner = _expand(got[0].strip("\n"), path, root, home, (*stack, real), notes)
    return f"\n<!-- Imported from: {name} -->\n{inner}\n<!-- End of import from: {name} -->\n{tail}"
