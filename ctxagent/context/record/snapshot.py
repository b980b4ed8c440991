"""Context snapshots: what model call n of a session was sent, and why.

One JSON file per model call, `<state_dir>/snapshots/<session>/<n>.json`, never
overwritten; side calls (a tool's, a compaction summary's) are files of their own.
The file format: docs/context.md ("Snapshot files").
"""

from __future__ import annotations

import json
import os
import re
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from ctxagent.context.record.objects import store_for
from ctxagent.context.record.pack import pack, unpack
from ctxagent.errors import NotFoundError, StorageError
from ctxagent.redaction import REDACTED  # noqa: F401  (re-exported: one redaction for all)
from ctxagent.redaction import redact as scrub  # noqa: F401  (re-exported)
from ctxagent.storage.files import atomic_write_bytes, ensure_state_dir, guard_state_path, json_bytes, refuse_links_below
from ctxagent.storage.ids import resolve_id

#: Numbers a writer tries past a taken one before giving up (another writer keeps taking them).
_MAX_TRIES = 1000
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
    state_dir: Path, session_id: str, n: int, request: dict, report: dict, *, secrets: Iterable[str] = (),
    summary_calls: list[dict] | None = None,
) -> Path:
    """Write call `n`'s snapshot (secrets scrubbed), or call n+1's, n+2's... when `n` is
    taken: an existing file is never overwritten. Returns the path written; its number is
    the file's `call` (and the report's, when the report has one).

    Raises StorageError if the folder cannot be written, ValueError for a bad `n`.
    """
    path = snapshot_path(state_dir, session_id, n)
    guard_state_path(path)
    record = {"version": 1, "session": session_id, "call": n,
              "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "redacted": False,
              "request": request, "report": report}
    if summary_calls:
        record["summary_calls"] = summary_calls
    return _write_packed(path.parent, n, record, secrets)


def _write_packed(folder: Path, n: int, record: dict, secrets: Iterable[str]) -> Path:
    """Pack `record` into the session's objects (`ctxagent.context.record.pack`), append
    them, then write the call's file; both are fsynced with the next batch."""
    _make_folder(folder)
    store = store_for(folder)
    with store.lock:
        store.begin()
        packed, changed = pack(record, store, secrets)
        packed["redacted"] = changed
        store.write()
        path = _write_new(folder, n, packed)
        store.mark_written(path)
    return path


def write_call_snapshot(state: dict, n: int, request: dict, report: dict, *, secrets: Iterable[str] = (),
                        summary_calls: list[dict] | None = None) -> Path | None:
    """The assembler's snapshot of call `n`: `write_snapshot` in `<state["repo"]>/.ctxagent`
    for `state["session_id"]`. Returns the path (also put in `report["snapshot"]`, and its
    number in `report["call"]`), or None when the state names no repo or session.
    Raises StorageError if it cannot be written."""
    repo, session = state.get("repo"), state.get("session_id")
    if not repo or not session:
        return None
    root = ensure_state_dir(Path(repo))
    refuse_links_below(root, snapshot_path(root, str(session), n))  # snapshots/<session>/ may not be a link
    path = write_snapshot(root, str(session), n, request, report, secrets=secrets, summary_calls=summary_calls)
    report["call"], report["snapshot"] = int(path.stem), str(path)
    return path


def write_side_snapshot(state_dir: Path, session_id: str, n: int, kind: str, request: dict, details: dict, *,
                        secrets: Iterable[str] = ()) -> Path:
    """Write the snapshot of side call `n` (a model call a tool made; `kind` names the
    tool, e.g. "plan"): `request` as sent, and `details` (`made_for`, `tokens`, `usage`,
    `error`) beside it, secrets scrubbed. Numbered and never overwritten as `write_snapshot`."""
    if not isinstance(kind, str) or not kind or kind == "model":
        raise ValueError(f"a side call's kind names the tool that made it, got {kind!r}")
    path = snapshot_path(state_dir, session_id, n)
    guard_state_path(path)
    record = {"version": 1, "session": session_id, "call": n,
              "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "redacted": False,
              "kind": kind, "request": request}
    for key, value in details.items():
        if key not in record:
            record[key] = value
    return _write_packed(path.parent, n, record, secrets)


def write_side_call_snapshot(state: dict, n: int, kind: str, request: dict, details: dict, *,
                             secrets: Iterable[str] = ()) -> Path | None:
    """`write_side_snapshot` in `<state["repo"]>/.ctxagent` for `state["session_id"]`, as
    `write_call_snapshot`. Returns the path, or None when the state names no repo or session."""
    repo, session = state.get("repo"), state.get("session_id")
    if not repo or not session:
        return None
    root = ensure_state_dir(Path(repo))
    refuse_links_below(root, snapshot_path(root, str(session), n))
    return write_side_snapshot(root, str(session), n, kind, request, details, secrets=secrets)


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"could not write snapshots in {folder}: {exc.strerror or exc}") from exc


def _write_new(folder: Path, n: int, record: dict) -> Path:
    """Write `record` as `<folder>/<n>.json`, or under the next free number; never replaces a file."""
    _make_folder(folder)
    for _ in range(_MAX_TRIES):
        record["call"] = n
        if isinstance(record.get("report"), dict) and "call" in record["report"]:
            record["report"]["call"] = n
        target = folder / f"{n}.json"
        data = json_bytes(record, indent=1, default=str)
        if not os.path.lexists(target) and _create(target, data):
            return target
        n = max(n, highest_call_in(folder)) + 1
    raise StorageError(f"could not write a snapshot in {folder}: other writers kept taking the free numbers")


def _create(target: Path, data: bytes) -> bool:
    """Write `data` as `target` only if that name is free (`atomic_write_bytes(replace=False)`),
    fsynced later with its batch (`ObjectStore.mark_written`). False when another writer took
    the name first."""
    return atomic_write_bytes(target, data, mode=0o644, replace=False, sync=False)


def list_sessions(state_dir: Path) -> list[str]:
    """Session ids that have a snapshot folder, by id (ids sort by creation time: YYYYmmdd-HHMMSS-xxxx)."""
    root = Path(state_dir) / "snapshots"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and _SESSION_RE.match(p.name))


def list_calls(state_dir: Path, session_id: str) -> list[int]:
    """Call numbers with a snapshot in `session_id`, ascending."""
    return _calls_in(Path(state_dir) / "snapshots" / check_session_id(session_id))


def _calls_in(folder: Path) -> list[int]:
    if not folder.is_dir():
        return []
    return sorted(int(p.stem) for p in folder.glob("*.json") if p.stem.isdigit())


def highest_call(state_dir: Path, session_id: str) -> int:
    """The highest call number with a snapshot in `session_id`; 0 when there is none."""
    return highest_call_in(Path(state_dir) / "snapshots" / check_session_id(session_id))


def highest_call_in(folder: Path) -> int:
    """`highest_call` of a session's snapshot folder."""
    calls = _calls_in(folder)
    return calls[-1] if calls else 0


def resolve_session(state_dir: Path, session: str) -> str:
    """`session` (an id or a unique prefix of one), or, for "last", the session (not a sub-agent)
    whose snapshots were written most recently (a resumed session is newer than one started
    after it). NotFoundError if there is none, or the prefix is ambiguous (naming the candidates)."""
    if session != "last":
        session = check_session_id(session)
        known = [k for k in list_sessions(state_dir) if "." not in k or "." in session]  # sub-agents by full name
        if session in known or not any(k.startswith(session) for k in known):
            return session  # an exact id, or none: the caller says what is missing
        return resolve_id(session, known, what="session", listing="list them with `ctxagent sessions`")
    root = Path(state_dir) / "snapshots"
    folders = [root / name for name in list_sessions(state_dir) if "." not in name]  # `<parent>.<agent>-<n>`: a sub-agent
    written = [(folder.stat().st_mtime, folder.name) for folder in folders if _calls_in(folder)]
    if not written:
        raise NotFoundError(f"no snapshots under {root}: run a task first (ctxagent run ...)")
    return max(written)[1]


def read_snapshot(state_dir: Path, session: str, n: int | None = None) -> dict:
    """The snapshot of call `n` (None: the last readable one, damaged files skipped with one
    UserWarning) of `session` ("last": see `resolve_session`). Raises NotFoundError if absent,
    StorageError if damaged (or, for the last call, when none is readable)."""
    session_id = resolve_session(state_dir, session)
    calls = list_calls(state_dir, session_id)
    if not calls:
        raise NotFoundError(f"session {session_id!r} has no snapshots in {Path(state_dir) / 'snapshots'}")
    if n is not None:
        if n not in calls:
            raise NotFoundError(f"session {session_id!r} has no call {n}; calls: {_ranges(calls)}")
        return _load(snapshot_path(state_dir, session_id, n))
    damaged: list[str] = []
    for k in reversed(calls):
        path = snapshot_path(state_dir, session_id, k)
        try:
            snap = _load(path)
        except StorageError as exc:
            damaged.append(str(path))
            problem = exc
            continue
        if damaged:
            warnings.warn(f"snapshot {', '.join(damaged)} cannot be read, it may be damaged; "
                          f"showing call {k}, the newest readable one", UserWarning, stacklevel=2)
        return snap
    if len(damaged) == 1:
        raise problem
    raise StorageError(f"no snapshot of session {session_id!r} can be read ({', '.join(damaged)}); they may be damaged")


def _load(path: Path) -> dict:
    """The snapshot in `path`; StorageError naming it when it is not JSON or not shaped like one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StorageError(f"snapshot {path} cannot be read ({exc}); it may be damaged") from exc
    try:
        data = unpack(data, path.parent)
    except ValueError as exc:
        raise StorageError(f"snapshot {path} cannot be read ({exc}); it may be damaged") from exc
    problem = shape_problem(data)
    if problem:
        raise StorageError(f"snapshot {path} cannot be read ({problem}); it may be damaged")
    return data


def shape_problem(data: Any) -> str | None:
    """What is wrong with `data` as a snapshot (the parts `ctxagent inspect` reads), or None."""
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not an object"
    request, report = data.get("request", {}), data.get("report", {})
    for name, value, kind in (("request", request, dict), ("report", report, dict),
                              ("summary_calls", data.get("summary_calls", []), list)):
        if not isinstance(value, kind):
            return f'"{name}" is not a JSON {"object" if kind is dict else "list"}'
    if not isinstance(request.get("messages", []), list):
        return '"request.messages" is not a list'
    if not isinstance(report.get("budget", {}), dict) or not isinstance(report.get("sources", {}), dict):
        return '"report.budget" or "report.sources" is not an object'
    layers, packets = report.get("layers", {}), report.get("packets", [])
    if not isinstance(layers, dict) or not all(isinstance(v, dict) for v in layers.values()):
        return '"report.layers" is not an object of objects'
    if not isinstance(packets, list) or not all(isinstance(r, dict) for r in packets):
        return '"report.packets" is not a list of objects'
    if not all(isinstance(c, dict) for c in data.get("summary_calls", [])):
        return '"summary_calls" is not a list of objects'
    if "kind" in data and (not isinstance(data["kind"], str) or not isinstance(data.get("made_for"), (dict, type(None)))
                           or not isinstance(data.get("usage"), (dict, type(None)))):
        return '"kind", "made_for" or "usage" of a side call is not of its type'
    return None


def side_kind(snap: dict) -> str | None:
    """The tool that made this snapshot's call ("plan"), or None for a main call of the loop."""
    kind = snap.get("kind")
    return kind if isinstance(kind, str) and kind != "model" else None


def side_calls_for(state_dir: Path, session: str, n: int) -> list[dict]:
    """The side calls made for main call `n` of `session` (a session id): the snapshots
    numbered right after it, up to the next main call, whose `made_for.call` is `n`
    (another writer's calls in between are passed over). A damaged file ends the search."""
    found = []
    for k in list_calls(state_dir, session):
        if k <= n:
            continue
        try:
            snap = _load(snapshot_path(state_dir, session, k))
        except StorageError:
            break
        if side_kind(snap) is None:
            break
        if (snap.get("made_for") or {}).get("call") == n:
            found.append(snap)
    return found


def side_calls_in(state_dir: Path, session: str) -> list[dict]:
    """Every readable side-call snapshot of `session` (a session id), by number; reads
    every snapshot of the session (for `ctxagent inspect --grep`)."""
    found = []
    for k in list_calls(state_dir, session):
        path = snapshot_path(state_dir, session, k)
        if not _side_header(path):  # a main call's file (most of them, and large) is not parsed
            continue
        try:
            snap = _load(path)
        except StorageError:
            continue
        if side_kind(snap) is not None:
            found.append(snap)
    return found


def summary_calls_in(state_dir: Path, session: str) -> list[dict]:
    """The summary calls kept inside main calls' snapshots of `session` (a session id), by
    number: each entry of their `summary_calls` with "call" (the snapshot holding it) and
    "index" (its place there) added. Only files with a top-level `summary_calls` key are
    parsed; unreadable ones are passed over (for `ctxagent inspect --grep`)."""
    found = []
    for k in list_calls(state_dir, session):
        path = snapshot_path(state_dir, session, k)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, ValueError):
            continue
        if _SUMMARY_KEY not in text:  # JSON strings hold no raw newline: this is the top-level key
            continue
        try:
            snap = _load(path)
        except StorageError:
            continue
        if side_kind(snap) is None:
            found += [{**entry, "call": k, "index": i} for i, entry in enumerate(snap.get("summary_calls") or [])]
    return found


#: The top-level `summary_calls` key as `_write_new` writes it (one space of indent).
_SUMMARY_KEY = '\n "summary_calls": ['

#: How a side call's file starts (`_write_new` writes the keys in order, one a line): the
#: `kind` key comes before the request, so a file's first bytes say whether it is one.
_HEAD_BYTES = 1024


def _side_header(path: Path) -> bool:
    """Whether the file at `path` starts like a side call's snapshot (a top-level `kind`)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return False
    return '\n "kind": "' in head.split('\n "request":', 1)[0]


def _ranges(calls: list[int]) -> str:
    return f"{calls[0]}..{calls[-1]}" if len(calls) > 3 else ", ".join(map(str, calls))


def load_snapshot_file(path: Path) -> dict:
    """The snapshot in file `path`, whole (refs resolved, any version); StorageError when damaged."""
    return _load(Path(path))
