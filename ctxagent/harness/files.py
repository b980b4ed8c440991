"""One way to read a harness file: text, size on disk, and a byte cap with a marked cut."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: Bytes read from any one harness file before its cap applies (a larger file is cut anyway).
READ_LIMIT = 4 * 1024 * 1024


@dataclass(frozen=True)
class LoadedFile:
    """One file the harness put into the system layer.

    path: the file; kind: "profile" | "agents" | "import" | "nested"; scope: "user" | "repo";
    size: bytes on disk; cut: True when only part of it was sent; text: what was sent;
    tag: the section (profile files: "Agent_Profile"...; others "")."""

    path: Path
    kind: str
    scope: str
    size: int
    cut: bool
    text: str
    tag: str = ""


def read_text(path: Path) -> tuple[str, int] | None:
    """(text, size in bytes) of the regular file `path` (a symbolic link to one is followed);
    None when it is missing, not a file or unreadable. Undecodable bytes become U+FFFD."""
    try:
        if not os.path.isfile(path):
            return None
        size = os.path.getsize(path)
        with open(path, "rb") as handle:
            data = handle.read(READ_LIMIT)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace"), size


def cut_bytes(text: str, max_bytes: int, what: str) -> tuple[str, bool]:
    """`text` kept to `max_bytes` UTF-8 bytes (a character never split), with a marker line
    naming `what` when cut; (text, was_cut)."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text, False
    kept = data[:max(0, max_bytes)].decode("utf-8", errors="ignore")
    return f"{kept.rstrip()}\n[... {what} cut at {max_bytes:,} of {len(data):,} bytes ...]", True
