"""The unified diff of planned changes: what the user sees and approves. No colour codes.

Git-like: a `diff --git a/<path> b/<path>` line per file, `/dev/null` for added and
deleted files, `rename from/to` for moves, `\\ No newline at end of file` where a
version lacks its final newline. Lines are compared by content, so CRLF files show as
ordinary lines (the `\\r` is not printed).
"""

from __future__ import annotations

import difflib

from ctxagent.patch.plan import FileChange
from ctxagent.patch.textfile import decode_text, is_binary

_NO_EOL = "\\ No newline at end of file"


def unified_diff(changes: list[FileChange], *, context: int = 3) -> str:
    """The diff of `changes` (from `plan_patch`) with `context` lines around each hunk."""
    by_path = {c.path: c for c in changes}
    parts = []
    for change in changes:
        if change.moved_to is not None and change.moved_to in by_path:
            continue  # shown with its destination
        source = by_path.get(change.moved_from) if change.moved_from else None
        parts.append(_file_diff(change, source, context))
    return "".join(parts)


def _file_diff(change: FileChange, source: FileChange | None, context: int) -> str:
    old_path = source.path if source else change.path
    old_bytes = source.old_bytes if source else change.old_bytes
    head = [f"diff --git a/{old_path} b/{change.path}\n"]
    if source:
        head += [f"rename from {old_path}\n", f"rename to {change.path}\n"]
    elif change.old_bytes is None:
        head.append(f"new file mode {0o100000 | (change.mode or 0o644):o}\n")
    elif change.new_bytes is None:
        head.append("deleted file\n")
    from_name = "/dev/null" if old_bytes is None else f"a/{old_path}"
    to_name = "/dev/null" if change.new_bytes is None else f"b/{change.path}"
    if (old_bytes and is_binary(old_bytes)) or (change.new_bytes and is_binary(change.new_bytes)):
        return "".join(head) + f"Binary files {from_name} and {to_name} differ\n"
    body = difflib.unified_diff(_lines(old_bytes), _lines(change.new_bytes), from_name, to_name, n=context)
    return "".join(head) + "".join(_mark_no_eol(line) for line in body)


def _lines(data: bytes | None) -> list[str]:
    if not data:
        return []
    text = decode_text(data)
    lines = [line + "\n" for line in text.lines]
    if lines and not text.final_newline:
        lines[-1] = lines[-1][:-1]
    return lines


def _mark_no_eol(line: str) -> str:
    return line if line.endswith("\n") else f"{line}\n{_NO_EOL}\n"
