"""SQLite files of ctxagent (memory.db, the knowledge base): opening, recovery, a store base.

`SQLiteStore` is the base of `MemoryStore` and `KnowledgeBase`: one connection (WAL, busy
timeout) opened by `open_sqlite`, which runs the migrations and sets a damaged file aside.
Reference: docs/memory-rag.md ("Storage").
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from ctxagent.errors import StorageError
from ctxagent.storage.files import LOCK_TIMEOUT_S, file_lock, guard_state_path, refuse_link, unique_path

#: Files SQLite keeps beside a database; none may be a symbolic link either.
SIDECARS = ("-wal", "-shm", "-journal")
#: Primary SQLite result codes meaning "the file is damaged" (https://sqlite.org/rescode.html).
DAMAGED_CODES = {11: "SQLITE_CORRUPT", 26: "SQLITE_NOTADB"}


def connect_sqlite(path: Path, *, timeout: float = LOCK_TIMEOUT_S) -> sqlite3.Connection:
    """Open a SQLite database for concurrent use: WAL, busy timeout `timeout` seconds, foreign keys.
    Raises StorageError when the file or one of its SIDECARS is a symbolic link, the
    `.ctxagent` folder is refused (`guard_state_path`) or cannot be created; sqlite3.DatabaseError
    when the file is not a usable database (the connection is closed first)."""
    path = Path(path)
    guard_state_path(path)
    for name in (path.name, *(path.name + suffix for suffix in SIDECARS)):
        refuse_link(path.with_name(name))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"cannot create the folder of {path}: {exc.strerror or exc}") from exc
    conn = sqlite3.connect(str(path), timeout=timeout, check_same_thread=False)
    try:
        _configure(conn, timeout)
    except BaseException:
        conn.close()
        raise
    return conn


def _configure(conn: sqlite3.Connection, timeout: float) -> None:
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


def is_damaged(exc: BaseException) -> bool:
    """True when `exc` is SQLite saying the file is corrupt or not a database at all."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in DAMAGED_CODES
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text


def open_sqlite(path: Path, setup: Callable[[sqlite3.Connection], None], *, what: str,
                timeout: float = LOCK_TIMEOUT_S) -> sqlite3.Connection:
    """Open `path` in autocommit mode and run `setup(conn)`; a damaged file is set aside under
    `<path>.lock` with one UserWarning and a new one created (`what` names it in messages).
    Raises StorageError for any other failure (locked, unwritable, a symbolic link, a newer
    schema) or when even a new database cannot be created. Reference: docs/memory-rag.md."""
    path = Path(path)
    try:
        return _open_once(path, setup, timeout)
    except sqlite3.DatabaseError as exc:
        if not is_damaged(exc):
            raise StorageError(f"cannot open {what} {path}: {exc}") from None
    with file_lock(path, timeout=timeout):
        try:
            return _open_once(path, setup, timeout)  # another process may have recovered it meanwhile
        except sqlite3.DatabaseError as exc:
            if not is_damaged(exc):
                raise StorageError(f"cannot open {what} {path}: {exc}") from None
            problem = exc
        aside = set_aside_sqlite(path)
        warnings.warn(f"{what} {path} was damaged ({problem}); it was moved to {aside.name} and a new, "
                      "empty one was created", stacklevel=2)
        try:
            return _open_once(path, setup, timeout)
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"cannot create a new {what} at {path}: {exc}") from None


def _open_once(path: Path, setup: Callable[[sqlite3.Connection], None], timeout: float) -> sqlite3.Connection:
    conn = connect_sqlite(path, timeout=timeout)
    try:
        conn.isolation_level = None  # autocommit; writers use BEGIN IMMEDIATE
        setup(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def set_aside_sqlite(path: Path) -> Path:
    """Move `path` and its -wal/-shm/-journal files to `<name>.corrupt-<unix ms>` (+ the
    same suffixes) beside it; return the new path of the database. Raises StorageError."""
    path = Path(path)
    aside = unique_path(path.with_name(f"{path.name}.corrupt-{int(time.time() * 1000)}"))
    try:
        os.replace(path, aside)
        for suffix in SIDECARS:
            extra = path.with_name(path.name + suffix)
            if os.path.lexists(extra):
                os.replace(extra, aside.with_name(aside.name + suffix))
    except OSError as exc:
        raise StorageError(f"cannot move the damaged database {path} aside: {exc.strerror or exc}") from exc
    return aside


@contextmanager
def immediate_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One `BEGIN IMMEDIATE` transaction on `conn`: committed whole, or rolled back on any
    error (the error is re-raised). IMMEDIATE takes the write lock up front, so a writer
    waits in the busy timeout instead of failing half way (case S04)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


class SQLiteStore:
    """One SQLite file `path`, opened with `open_sqlite(path, setup)`, shared by threads (one
    connection behind a lock). `label` names it in errors ("memory database"); `damaged_hint`
    says what to do with a damaged file. `read()`/`write()` raise StorageError.
    """

    label = "database"
    damaged_hint = "Move it aside to start afresh"

    def __init__(self, path: str | Path, setup: Callable[[sqlite3.Connection], None], *,
                 timeout_s: float = LOCK_TIMEOUT_S) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._conn = open_sqlite(self.path, setup, what=f"the {self.label}", timeout=timeout_s)

    def close(self) -> None:
        """Close the connection (the store is unusable afterwards)."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """The connection, locked, for a read; SQLite errors become StorageError."""
        with self._lock, self._errors():
            yield self._conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One `BEGIN IMMEDIATE` transaction: committed whole, or rolled back on any error."""
        with self._lock, self._errors():
            with immediate_transaction(self._conn) as conn:
                yield conn

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as exc:
            raise StorageError(f"{self.label} {self.path}: {exc}. Another process may hold it for longer "
                               "than the busy timeout; try again") from None
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"{self.label} {self.path} is damaged: {exc}. {self.damaged_hint}") from None
