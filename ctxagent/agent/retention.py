"""Remove old sessions: their transcript (`sessions/<id>.jsonl`) and snapshots (`snapshots/<id>/`).

`prune_sessions(repo, older_than_s=..., keep=...)` removes the sessions last used more than
`older_than_s` seconds ago, except the `keep` newest (by last use: a resumed session is
recent); with only one of the two, that one decides. A session used in the last
`IN_USE_S` seconds is never removed (another process may be running it). The removed
sessions' checkpoints go too, as far as they are the oldest (`prune_checkpoints`, which
also serves `ctxagent checkpoints --prune`). Reference: docs/state.md, docs/checkpoints.md.
"""

from __future__ import annotations

import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from ctxagent.errors import StorageError, ToolInputError
from ctxagent.exec.checkpoint_prune import PruneResult, prune_store
from ctxagent.exec.checkpoints import CheckpointStore
from ctxagent.storage.files import state_dir

#: Seconds since its last write during which a session counts as in use.
IN_USE_S = 3600.0
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


@dataclass
class StoredSession:
    """One session on disk: `id`, `last_used` (Unix seconds), `bytes` (transcript + snapshots), its paths."""

    id: str
    last_used: float
    bytes: int
    paths: list[Path]


def parse_age(text: str) -> float:
    """Seconds in an age such as "30d", "12h", "2w", "90m", "45s" (a bare number is days).
    Raises ToolInputError saying the accepted form."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", str(text))
    if not match:
        raise ToolInputError(f"cannot read the age {text!r}: use a number and a unit, e.g. 30d, 12h, 2w")
    return float(match.group(1)) * _UNITS[match.group(2) or "d"]


def stored_sessions(repo: Path) -> list[StoredSession]:
    """Every session with a transcript or a snapshot folder in `repo`, newest use first."""
    root = state_dir(Path(repo))
    found: dict[str, list[Path]] = {}
    for path in sorted((root / "sessions").glob("*.jsonl")) if (root / "sessions").is_dir() else []:
        found.setdefault(path.stem, []).append(path)
    for path in sorted((root / "sessions").iterdir()) if (root / "sessions").is_dir() else []:
        if path.is_dir() and not path.is_symlink() and path.name in found:
            found[path.name].append(path)  # its sub-agents' transcripts
    snaps = root / "snapshots"
    for path in sorted(snaps.iterdir()) if snaps.is_dir() else []:
        if path.is_dir() and not path.is_symlink():
            found.setdefault(path.name, []).append(path)
    rows = [_measure(sid, paths) for sid, paths in found.items() if _ID.match(sid)]
    return sorted(rows, key=lambda r: (r.last_used, r.id), reverse=True)


def _measure(session_id: str, paths: list[Path]) -> StoredSession:
    last, size = 0.0, 0
    for path in paths:
        for item in [path, *(path.iterdir() if path.is_dir() else [])]:
            try:
                st = item.stat()
            except OSError:
                continue
            last = max(last, st.st_mtime)
            size += st.st_size if item.is_file() else 0
    return StoredSession(session_id, last, size, paths)


def select_prunable(sessions: list[StoredSession], *, older_than_s: float | None, keep: int | None,
                    now: float | None = None) -> list[StoredSession]:
    """The sessions (newest first, as `stored_sessions` gives them) that pruning removes."""
    if older_than_s is None and keep is None:
        raise ToolInputError("say what to prune: --older-than AGE (e.g. 30d), --keep N, or both")
    now = time.time() if now is None else now
    out = []
    for rank, row in enumerate(sessions):
        if now - row.last_used < IN_USE_S or (keep is not None and rank < keep):
            continue
        if older_than_s is None or now - row.last_used > older_than_s:
            out.append(row)
    return out


def prune_sessions(repo: Path, *, older_than_s: float | None = None, keep: int | None = None,
                   dry_run: bool = False, now: float | None = None, checkpoints: bool = True) -> list[StoredSession]:
    """Remove (unless `dry_run`) the sessions `select_prunable` picks, and (`checkpoints`) their
    checkpoints as `prune_checkpoints(sessions=...)` does; returns the sessions. Raises
    ToolInputError; CheckpointError when the checkpoints could not be pruned (sessions are gone)."""
    chosen = select_prunable(stored_sessions(repo), older_than_s=older_than_s, keep=keep, now=now)
    if not dry_run:
        _remove(chosen)
        if checkpoints and chosen:
            prune_session_checkpoints(repo, chosen, now=now)
    return chosen


def prune_session_checkpoints(repo: Path, removed: list[StoredSession], *, dry_run: bool = False,
                              now: float | None = None) -> PruneResult:
    """After sessions were removed: the oldest checkpoints of those sessions go, and with them
    any of no stored session (`ctxagent apply`'s "cli", sessions removed earlier) recorded
    before the newest of them was last used. Raises CheckpointError (the old store is kept)."""
    now = time.time() if now is None else now
    if not removed:
        return PruneResult([], 0, 0, None if dry_run else 0, dry_run)
    gone = {r.id for r in removed}
    known = {r.id for r in stored_sessions(repo)} - gone
    orphans = {c.session_id for c in CheckpointStore.for_repo(repo).checkpoints()} - known
    horizon = max(0.0, now - max(r.last_used for r in removed) - 1.0)
    return prune_checkpoints(repo, sessions=gone | orphans, older_than_s=horizon, dry_run=dry_run, now=now)


def prune_checkpoints(repo: Path, *, older_than_s: float | None = None, keep: int | None = None,
                      sessions: set[str] | None = None, dry_run: bool = False, now: float | None = None) -> PruneResult:
    """Remove the oldest checkpoints of `repo` (`exec.checkpoint_prune.select_prunable`), never
    one of a session used in the last `IN_USE_S` seconds or younger than that. Raises
    ToolInputError (bad selection), CheckpointError (the old store is kept usable)."""
    now = time.time() if now is None else now
    in_use = {r.id for r in stored_sessions(repo) if now - r.last_used < IN_USE_S}
    return prune_store(CheckpointStore.for_repo(repo), dry_run=dry_run, older_than_s=older_than_s, keep=keep,
                       sessions=sessions, protected=in_use, recent_s=IN_USE_S, now=now)


def _remove(rows: list[StoredSession]) -> None:
    for row in rows:
        for path in row.paths:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def retention_notice(repo: Path, settings: object, *, exclude: str | None = None) -> str | None:
    """Apply `[state] prune_older_than_days` / `prune_keep` at a new session's start; one line
    saying what was removed (None when nothing was, or retention is off)."""
    days = float(getattr(settings, "prune_older_than_days", 0) or 0)
    if days <= 0:
        return None
    keep = int(getattr(settings, "prune_keep", 0) or 0)
    rows = [r for r in stored_sessions(repo) if r.id != exclude]
    chosen = select_prunable(rows, older_than_s=days * 86_400, keep=keep)
    _remove(chosen)
    if not chosen:
        return None
    freed, checkpoints = sum(r.bytes for r in chosen), ""
    try:
        pruned = prune_session_checkpoints(repo, chosen)
        freed += pruned.freed
        checkpoints = f" and {len(pruned.removed)} old checkpoint(s)" if pruned.removed else ""
    except StorageError as exc:
        checkpoints = f" (their checkpoints were kept: {exc})"
    return (f"removed {len(chosen)} session(s) unused for over {days:g} days{checkpoints} ({freed / 1e6:.1f} MB; "
            f"the {keep} newest are kept): [state] prune_older_than_days, or set it to 0 to keep all")
