"""Messages that help a model retry a hunk that did not locate: nearest lines, candidates;
and the files a missing path may have meant (`paths_ending_with`).

The nearest lines are the window of the file most similar to the hunk's expected lines
(difflib ratio over the lines with surrounding whitespace stripped), shown with 1-based
line numbers so the model can copy them exactly.
"""

from __future__ import annotations

import os
from difflib import SequenceMatcher
from pathlib import Path
from typing import Sequence

#: At most this many lines of a hunk or of a file window are quoted in a message.
MAX_QUOTED = 12
#: `paths_ending_with` looks at no more than this many entries (the error path of a large tree stays quick).
MAX_SCANNED = 20_000
_SKIPPED_DIRS = {".git", ".ctxagent", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache"}


def paths_ending_with(root: Path, path: str, most: int = 3) -> list[str]:
    """Up to `most` files under `root` (relative, `/`-separated, sorted) whose path ends with
    `/path`: what `filesize.py`, written from a subdirectory, means from the workspace root."""
    tail = "/" + os.path.normpath(path).replace(os.sep, "/").lstrip("/")
    if tail in ("/", "/."):
        return []
    found, scanned = [], 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        scanned += len(dirs) + len(files)
        rel = Path(folder).relative_to(root).as_posix()
        found += [f"{rel}/{name}" if rel != "." else name for name in files
                  if f"/{rel}/{name}".endswith(tail) and rel != "."]
        if scanned > MAX_SCANNED:
            break
    return sorted(found)[:most]


def nearest_window(lines: Sequence[str], pattern: Sequence[str]) -> tuple[int, float] | None:
    """(0-based start, similarity 0..1) of the window of `len(pattern)` lines of `lines`
    most similar to `pattern`, or None when the file or the pattern is empty."""
    if not lines or not pattern:
        return None
    size = min(len(pattern), len(lines))
    matcher = SequenceMatcher(None, autojunk=False)
    matcher.set_seq2("\n".join(p.strip() for p in pattern))
    stripped = [s.strip() for s in lines]
    best: tuple[int, float] | None = None
    for i in range(len(lines) - size + 1):
        matcher.set_seq1("\n".join(stripped[i:i + size]))
        floor = best[1] if best else -1.0
        if matcher.real_quick_ratio() <= floor or matcher.quick_ratio() <= floor:
            continue
        score = matcher.ratio()
        if score > floor:
            best = (i, score)
    return best


def quote(lines: Sequence[str], indent: str = "    ") -> str:
    """Lines as an indented block, cut to MAX_QUOTED lines."""
    shown = [f"{indent}{s}" for s in lines[:MAX_QUOTED]]
    if len(lines) > MAX_QUOTED:
        shown.append(f"{indent}... ({len(lines) - MAX_QUOTED} more lines)")
    return "\n".join(shown)


def numbered(lines: Sequence[str], start: int, count: int) -> str:
    """`lines[start:start+count]` (capped) as `  <n> | text` with 1-based numbers."""
    end = min(len(lines), start + min(count, MAX_QUOTED))
    width = len(str(end))
    return "\n".join(f"    {i + 1:>{width}} | {lines[i]}" for i in range(start, end))


def not_found(lines: Sequence[str], pattern: Sequence[str], path: str, what: str) -> str:
    """Message for a hunk (or anchor) whose lines are not in the file."""
    parts = [f"{what} was not found in {path}. Expected these lines:", quote(pattern)]
    near = nearest_window(lines, pattern)
    if near is None:
        parts.append(f"{path} is empty." if not lines else "")
    else:
        start, score = near
        last = start + min(len(pattern), len(lines))
        parts.append(
            f"Nearest lines in {path} (lines {start + 1}-{last}, {score:.0%} similar):\n"
            + numbered(lines, start, len(pattern))
        )
    parts.append(
        "Re-read the file and resend the hunk with its ' ' and '-' lines copied exactly "
        "from the file (an '@@ <line>' anchor may point at the right place)."
    )
    return "\n".join(p for p in parts if p)


def ambiguous(lines: Sequence[str], candidates: Sequence[int], path: str, what: str) -> str:
    """Message for a hunk that matches several places (case P03): 1-based line numbers."""
    numbers = ", ".join(str(c + 1) for c in candidates)
    shown = [f"    line {c + 1}{_preceded(lines, c)}" for c in candidates[:MAX_QUOTED]]
    return (
        f"{what} matches {len(candidates)} places in {path} (lines {numbers}); it must match "
        "exactly one. Nothing was changed.\n" + "\n".join(shown) + "\n"
        "Add context lines that differ between these places, or an '@@ <line>' anchor naming "
        "a line shortly before the intended place (for example the enclosing 'def' or 'class' line)."
    )


def _preceded(lines: Sequence[str], index: int) -> str:
    for k in range(index - 1, max(-1, index - 20), -1):
        if lines[k].strip():
            return f", after line {k + 1}: {lines[k].strip()[:60]!r}"
    return ""
