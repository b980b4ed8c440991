"""Whether a memory about changed files still holds: the files are as the memory left them.

An episodic memory of a turn that changed files keeps, per file, a digest of its content
before the turn and after it (`metadata["file_state"]`: {path: {"before", "after"}}, a
digest or None for "no such file"). When a file no longer matches its "after" digest (the
change was undone with `/undo` or `/rewind`, reverted with git, or edited since), the
memory is stale: `staleness` says why, and the loop's memory layer leaves it out.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

#: Bytes of a file read for its digest; a larger file is digested by its first bytes and size.
MAX_BYTES = 8 * 1024 * 1024


def file_digest(path: Path) -> str | None:
    """16 hex digits of the SHA-256 of the file at `path` (None when it is absent or unreadable)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_BYTES:
        data = data[:MAX_BYTES] + str(Path(path).stat().st_size).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def staleness(metadata: Any, root: Path | None) -> str | None:
    """Why a memory with `metadata` no longer holds for the workspace `root` ("reverted: a.py",
    "changed since: b.py"), or None (no file state recorded, or every file as it was left)."""
    state = metadata.get("file_state") if isinstance(metadata, dict) else None
    if root is None or not isinstance(state, dict):
        return None
    reverted, changed = [], []
    for rel, digests in state.items():
        if not isinstance(digests, dict) or ".." in Path(rel).parts or Path(rel).is_absolute():
            continue
        now = file_digest(Path(root) / rel)
        if now == digests.get("after"):
            continue
        (reverted if now == digests.get("before") else changed).append(rel)
    parts = ([f"reverted: {', '.join(reverted)}"] if reverted else []) + (
        [f"changed since: {', '.join(changed)}"] if changed else [])
    return "; ".join(parts) or None
