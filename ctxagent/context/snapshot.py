"""Context snapshots: what model call n of a session was sent, and why.

One JSON file per model call, `<state_dir>/snapshots/<session>/<n>.json` (DESIGN.md
section 4), written atomically:

    {"version": 1, "session": id, "call": n, "created_at": ISO-8601 UTC,
     "request": {"model", "messages", "tools", ...}, "report": builder report}

Secrets never reach disk: keys named like credentials (`api_key`, `authorization`,
`password`, `secret`, `access_token`...) are replaced by "[REDACTED]", and string
values are scrubbed of API-key shapes (`sk-...`, `Bearer ...`) and of any secret
strings the caller passes (e.g. `Settings.secrets()`): `ctxagent.redaction.redact`.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from ctxagent.errors import NotFoundError, StorageError
from ctxagent.redaction import REDACTED, redact as scrub  # noqa: F401  (re-exported: one redaction for all)
from ctxagent.storage import atomic_write_text

_SESSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_session_id(session_id: str) -> str:
    """`session_id` if it is a safe folder name (letters, digits, `.`, `_`, `-`); else NotFoundError."""
    if not isinstance(session_id, str) or not _SESSION_RE.match(session_id) or ".." in session_id:
        raise NotFoundError(f"invalid session id {session_id!r}: use letters, digits, '.', '_' and '-' only")
    return session_id


def snapshot_path(state_dir: Path, session_id: str, n: int) -> Path:
    """`<state_dir>/snapshots/<session>/<n>.json`."""
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"call number must be an integer >= 0, got {n!r}")
    return Path(state_dir) / "snapshots" / check_session_id(session_id) / f"{n}.json"


def write_snapshot(
    state_dir: Path, session_id: str, n: int, request: dict, report: dict, *, secrets: Iterable[str] = ()
) -> Path:
    """Write call `n`'s snapshot atomically (secrets scrubbed); returns its path.

    Raises StorageError if the folder cannot be written, ValueError for a bad `n`.
    """
    path = snapshot_path(state_dir, session_id, n)
    record = {
        "version": 1, "session": session_id, "call": n,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "request": scrub(request, secrets), "report": scrub(report, secrets),
    }
    atomic_write_text(path, json.dumps(record, ensure_ascii=False, indent=1, default=str))
    return path


def list_sessions(state_dir: Path) -> list[str]:
    """Session ids that have snapshots, oldest first (ids sort by time: YYYYmmdd-HHMMSS-xxxx)."""
    root = Path(state_dir) / "snapshots"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and _SESSION_RE.match(p.name))


def list_calls(state_dir: Path, session_id: str) -> list[int]:
    """Call numbers with a snapshot in `session_id`, ascending."""
    folder = Path(state_dir) / "snapshots" / check_session_id(session_id)
    if not folder.is_dir():
        return []
    return sorted(int(p.stem) for p in folder.glob("*.json") if p.stem.isdigit())


def resolve_session(state_dir: Path, session: str) -> str:
    """`session`, or the newest session with snapshots when it is "last". NotFoundError if none."""
    if session != "last":
        return check_session_id(session)
    sessions = list_sessions(state_dir)
    if not sessions:
        raise NotFoundError(f"no snapshots under {Path(state_dir) / 'snapshots'}: run a task first (ctxagent run ...)")
    return sessions[-1]


def read_snapshot(state_dir: Path, session: str, n: int | None = None) -> dict:
    """The snapshot of call `n` (None: the last call) of `session` ("last": newest session).

    Raises NotFoundError if the session or call has no snapshot, StorageError if the
    file is not valid JSON.
    """
    session_id = resolve_session(state_dir, session)
    calls = list_calls(state_dir, session_id)
    if not calls:
        raise NotFoundError(f"session {session_id!r} has no snapshots in {Path(state_dir) / 'snapshots'}")
    if n is None:
        n = calls[-1]
    if n not in calls:
        raise NotFoundError(f"session {session_id!r} has no call {n}; calls: {_ranges(calls)}")
    path = snapshot_path(state_dir, session_id, n)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StorageError(f"snapshot {path} cannot be read ({exc}); it may be damaged") from exc


def _ranges(calls: list[int]) -> str:
    return f"{calls[0]}..{calls[-1]}" if len(calls) > 3 else ", ".join(map(str, calls))
