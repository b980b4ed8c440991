"""Durable state on disk: atomic writes, backups, JSONL append, file locks, SQLite setup.

Rules (DESIGN.md section 4): every write goes to a temporary file in the same folder,
is fsynced and then `os.replace`d over the target, so a crash leaves either the old or
the new bytes, never a mix. Readers survive empty or corrupt files: they fall back to
the `.bak` copy, and a corrupt file is copied aside (`<name>.corrupt-<stamp>`) before
anything overwrites it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable

from filelock import FileLock

from ctxagent.errors import StorageError

#: Seconds a writer waits for a file lock or a busy SQLite database before giving up.
LOCK_TIMEOUT_S = 30.0


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write `data` to `path` atomically (temp file + fsync + os.replace).

    `mode`: permission bits for the new file; by default the old file's bits are kept
    (0o644 for a new file). Raises StorageError if the folder cannot be written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise StorageError(f"could not write {path}: {exc.strerror or exc}") from exc
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, *, encoding: str = "utf-8") -> None:
    """Write `text` atomically; see `atomic_write_bytes`."""
    atomic_write_bytes(Path(path), text.encode(encoding))


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def set_aside(path: Path) -> Path:
    """Copy a corrupt file to `<name>.corrupt-<unix stamp>` beside it and return that path."""
    path = Path(path)
    target = path.with_name(f"{path.name}.corrupt-{int(time.time() * 1000)}")
    shutil.copy2(path, target)
    return target


def write_json_with_backup(path: Path, value: Any) -> None:
    """Atomically write `value` as JSON to `path`, first copying a valid old file to `.bak`.

    The old file is copied to `<path>.bak` only if it parses, so a corrupt file never
    replaces a good backup.
    """
    path = Path(path)
    if path.exists() and _parses(path):
        atomic_write_bytes(path.with_name(path.name + ".bak"), path.read_bytes())
    atomic_write_text(path, json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def _parses(path: Path) -> bool:
    try:
        json.loads(path.read_text(encoding="utf-8"))
        return True
    except (OSError, ValueError):
        return False


def read_json_with_fallback(
    path: Path,
    default: Callable[[], Any],
    *,
    validate: Callable[[Any], Any] | None = None,
) -> Any:
    """Read JSON from `path`, surviving a missing, empty or corrupt file.

    Order: the file itself; if it is empty or corrupt (or `validate` raises on it) it is
    set aside and a warning is issued, then `<path>.bak` is tried; then `default()`.
    `validate(value)` may return a normalised value or raise ValueError/TypeError.
    """
    path = Path(path)
    for candidate in (path, path.with_name(path.name + ".bak")):
        if not candidate.exists():
            continue
        try:
            value = json.loads(candidate.read_text(encoding="utf-8"))
            return validate(value) if validate else value
        except (OSError, ValueError, TypeError) as exc:
            aside = set_aside(candidate)
            warnings.warn(f"{candidate} is unreadable ({exc}); copied to {aside.name}", stacklevel=2)
    return default()


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON object as a line and fsync, so a crash loses at most this record."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSONL file, skipping a torn last line (a crash mid-append) and blank lines."""
    records = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
    return records


def file_lock(path: Path, timeout: float = LOCK_TIMEOUT_S) -> FileLock:
    """An inter-process lock guarding `path` (lock file `<path>.lock`), for read-modify-write."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path) + ".lock", timeout=timeout)


def connect_sqlite(path: Path, *, timeout: float = LOCK_TIMEOUT_S) -> sqlite3.Connection:
    """Open a SQLite database for concurrent use: WAL mode, busy timeout, foreign keys.

    `timeout` is in seconds and covers "database is locked" waits. Setting WAL on a new
    file can itself race with another opener; that is retried within the timeout.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=timeout, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            break
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def state_dir(repo: Path) -> Path:
    """`<repo>/.ctxagent`, the per-repository state folder (not created here)."""
    return Path(repo) / ".ctxagent"
