"""Appends to the profile's memory files: the seed's "remember X" and "learn to do X".

`remember` appends `- YYYY-MM-DD: text` to Memory.md; `learn` appends a skill block
(`## title`, when to use, how, the date) to CustomSkill.md. Both refuse an entry that is
already there (the same words, ignoring case and spacing; for a skill, the same title) and
never delete or rewrite what exists: the file is read, the entry appended to its exact
bytes, and the result written atomically (temporary file, fsync, rename) under the file's
lock. A missing file starts with a one-line heading.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from ctxagent.errors import ToolInputError
from ctxagent.storage.files import atomic_write_bytes, file_lock

#: Characters of one entry (or one skill field), at most.
MAX_ENTRY_CHARS = 4000
_HEADINGS = {"Memory.md": "# Long-term memory\n", "CustomSkill.md": "# Custom skills\n"}


@dataclass(frozen=True)
class Appended:
    """What was appended: `path`, the `text` added, and the file's `size` in bytes afterwards."""

    path: Path
    text: str
    size: int


def memory_entry(text: str, day: dt.date) -> str:
    """The Memory.md line for `text` on `day` (continuation lines indented)."""
    lines = _clean(text, "entry").split("\n")
    return f"- {day.isoformat()}: " + "\n  ".join(lines) + "\n"


def skill_block(title: str, when: str, how: str, day: dt.date) -> str:
    """The CustomSkill.md block: `## title`, `When to use:`, `How:` and the date added."""
    title = " ".join(_clean(title, "title").split())
    return (f"\n## {title}\n\nWhen to use: {_clean(when, 'when')}\n\nHow:\n{_clean(how, 'how')}\n\n"
            f"(learned {day.isoformat()})\n")


def remember(path: Path, text: str, *, day: dt.date | None = None) -> Appended:
    """Append a dated memory entry to `path` (Memory.md). Raises ToolInputError when it is
    empty, too long or already there; StorageError when the file cannot be written."""
    entry = memory_entry(text, day or dt.date.today())
    return _append(Path(path), entry, lambda old: _norm(_clean(text, "entry")) in _entries(old),
                   "that memory is already in {path}; nothing was added")


def learn(path: Path, title: str, when: str, how: str, *, day: dt.date | None = None) -> Appended:
    """Append a skill block to `path` (CustomSkill.md). Raises ToolInputError when a field
    is empty or too long or a skill of that title is already there."""
    block = skill_block(title, when, how, day or dt.date.today())
    heading = _norm(" ".join(title.split()))
    return _append(Path(path), block, lambda old: heading in _titles(old),
                   "a skill titled " + repr(title.strip()) + " is already in {path}; nothing was added")


def _append(path: Path, entry: str, present, refusal: str) -> Appended:
    with file_lock(path):
        try:
            old = path.read_bytes()
        except FileNotFoundError:
            old = _HEADINGS.get(path.name, "").encode("utf-8")
        if present(old.decode("utf-8", errors="replace")):
            raise ToolInputError(refusal.format(path=path))
        glue = b"" if not old or old.endswith(b"\n") else b"\n"
        data = old + glue + entry.encode("utf-8")
        atomic_write_bytes(path, data)
    return Appended(path, entry, len(data))


def _clean(text: str, what: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ToolInputError(f"memory_file: the {what} is empty; say what to keep")
    # `<!--` and `-->` written as entities: the profile loader drops comments (an unclosed one
    # to the end of the file), so a raw one would hide this entry and every later one
    text = text.strip().replace("\r\n", "\n").replace("<!--", "&lt;!--").replace("-->", "--&gt;")
    if len(text) > MAX_ENTRY_CHARS:
        raise ToolInputError(f"memory_file: the {what} is {len(text):,} characters; keep it under {MAX_ENTRY_CHARS:,}")
    return text


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _entries(text: str) -> set[str]:
    """The entries of a Memory.md, normalized: each `- ` item (its date prefix dropped, its
    indented continuation lines joined) and each other non-blank line."""
    items: list[list[str]] = []
    for line in text.split("\n"):
        if line.startswith("- ") or not line.startswith((" ", "\t")) or not items:
            items.append([re.sub(r"^- (\d{4}-\d{2}-\d{2}: )?", "", line)])
        else:
            items[-1].append(line)
    return {_norm(" ".join(item)) for item in items if "".join(item).strip()}


def _titles(text: str) -> set[str]:
    return {_norm(m.group(1)) for m in re.finditer(r"^##\s+(.+?)\s*$", text, re.M)}
