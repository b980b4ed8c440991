"""Durable state on disk: atomic writes, backups, JSONL append, file locks.

Writes go to a fsynced temporary file `os.replace`d over the target; readers fall back
to `.bak` and copy a corrupt file aside once. `ensure_state_dir` / `state_dir` refuse a
`.ctxagent` that is or holds a symbolic link or resolves outside (docs/state.md).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import stat
import tempfile
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ctxagent.errors import StorageError

if TYPE_CHECKING:  # filelock is imported by `file_lock`: commands that only look never take a lock
    from filelock import FileLock

#: Seconds a writer waits for a file lock or a busy SQLite database before giving up.
LOCK_TIMEOUT_S = 30.0
#: The per-repository state folder (docs/state.md).
STATE_DIR_NAME = ".ctxagent"
#: Name prefix of `atomic_write_bytes`'s temporary files: short, so that any file name
#: the file system accepts (up to 255 bytes) can be written (breaker F6).
TMP_PREFIX = ".ctxtmp-"


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None, replace: bool = True,
                       sync: bool = True) -> bool:
    """Write `data` to `path` atomically (temp file + fsync + rename); True when written.
    `mode`: permission bits (default: the old file's, 0o644 new). `replace=False`: take the name
    only if free (False when another writer has it). `sync=False`: no fsync (the caller syncs
    later). Raises StorageError if it cannot be written or is refused (`guard_state_path`)."""
    path = Path(path)
    guard_state_path(path)
    return _atomic_write(path, data, mode, replace, sync)


def _atomic_write(path: Path, data: bytes, mode: int | None, replace: bool = True, sync: bool = True) -> bool:
    """The one write primitive (issue 10): temp file, fsync, chmod, rename or link, fsync the folder."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if mode is None:
            mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
        fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise StorageError(f"could not write {path}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        if replace:
            os.replace(tmp, path)
        elif not _link_if_free(tmp, path, mode):
            return False
    except OSError as exc:
        raise StorageError(f"could not write {path}: {exc.strerror or exc}") from exc
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    if sync:
        fsync_dir(path.parent)
    return True


def _link_if_free(tmp: str, target: Path, mode: int) -> bool:
    """Give the complete file `tmp` the name `target` unless it exists (atomic either way)."""
    try:
        os.link(tmp, target)  # a hard link fails, rather than replaces, when the name is taken
    except FileExistsError:
        return False
    except (OSError, NotImplementedError):  # a file system without hard links: claim the name, then fill it
        try:
            os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, mode))
        except FileExistsError:
            return False
        os.replace(tmp, target)
    return True


def atomic_write_text(path: Path, text: str, *, encoding: str = "utf-8") -> None:
    """Write `text` atomically; see `atomic_write_bytes`. A lone surrogate (from bytes that
    were not UTF-8, read with surrogateescape) is written as its escape (`\\udce9`), so
    such text is stored instead of failing the write."""
    atomic_write_bytes(Path(path), text.encode(encoding, "backslashreplace"))


def json_bytes(value: Any, **dumps: Any) -> bytes:
    """`value` as UTF-8 JSON (`json.dumps(value, ensure_ascii=False, **dumps)`). A lone
    surrogate in a string (bytes that were not UTF-8, read with surrogateescape) becomes
    the JSON escape `\\udce9`, which `json.loads` reads back as the same character, so
    nothing is lost and the write does not fail."""
    return json.dumps(value, ensure_ascii=False, **dumps).encode("utf-8", "backslashreplace")


def fsync_dir(folder: Path) -> None:
    """Flush `folder`'s entries (a rename or link in it) to disk; a file system that cannot is left alone."""
    fsync_path(folder)


def fsync_path(path: Path) -> None:
    """Flush what the OS holds of file or folder `path` to disk; a missing path, or a file
    system that cannot, is left alone."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def set_aside(path: Path) -> Path:
    """Copy a corrupt file to `<name>.corrupt-<unix ms>` beside it and return that path.

    When a copy with the same bytes is already there, that copy is returned and nothing
    is written: a file that stays corrupt is kept once, not once per read. Raises OSError.
    """
    path = Path(path)
    data = path.read_bytes()
    for old in path.parent.glob(glob.escape(path.name) + ".corrupt-*"):
        if _same_bytes(old, data):
            return old
    target = unique_path(path.with_name(f"{path.name}.corrupt-{int(time.time() * 1000)}"))
    shutil.copy2(path, target)
    return target


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        return path.is_file() and not path.is_symlink() and path.stat().st_size == len(data) \
            and path.read_bytes() == data
    except OSError:
        return False


def unique_path(target: Path) -> Path:
    """`target`, or `target-2`, `target-3`... whichever does not exist yet."""
    n = 1
    candidate = target
    while os.path.lexists(candidate):
        n += 1
        candidate = target.with_name(f"{target.name}-{n}")
    return candidate


def write_json_with_backup(path: Path, value: Any) -> None:
    """Atomically write `value` as JSON to `path`, first copying a valid old file to `.bak`.

    The old file is copied to `<path>.bak` only if it parses, so a corrupt file never
    replaces a good backup.
    """
    path = Path(path)
    if path.exists() and _parses(path):
        atomic_write_bytes(path.with_name(path.name + ".bak"), path.read_bytes())
    atomic_write_bytes(path, json_bytes(value, indent=2) + b"\n")


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
    """Read JSON from `path`: the file, else (empty, corrupt, or `validate` raising ValueError/
    TypeError) it is set aside and `<path>.bak` tried (written back when it restores the value),
    else `default()`. `validate(value)` may return a normalised value. Any problem gives
    exactly one UserWarning. Reference: docs/state.md ("Damaged state is recovered once")."""
    path = Path(path)
    backup = path.with_name(path.name + ".bak")
    problems: list[str] = []
    damaged: bytes | None = None
    for candidate in (path, backup):
        raw, value, problem = _read_candidate(candidate, validate)
        if problem is None and raw is not None:
            if problems:
                if candidate == backup and damaged is not None:
                    _restore(path, raw, damaged)
                warnings.warn(f"{path.parent}{os.sep}{'; '.join(problems)}; restored from {backup.name}", stacklevel=2)
            return value
        if problem is not None:
            problems.append(problem)
            if candidate == path and raw is not None:
                damaged = raw
    if problems:
        warnings.warn(f"{path.parent}{os.sep}{'; '.join(problems)}; no usable backup, so it reads as empty until it "
                      "is fixed or rewritten", stacklevel=2)
    return default()


def _read_candidate(path: Path, validate: Callable[[Any], Any] | None) -> tuple[bytes | None, Any, str | None]:
    """(raw bytes or None when missing/unreadable, parsed value, problem text or None)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None, None
    except OSError as exc:
        return None, None, f"{path.name} cannot be read ({exc.strerror or exc})"
    try:
        value = json.loads(raw.decode("utf-8"))
        return raw, validate(value) if validate else value, None
    except (ValueError, TypeError) as exc:
        try:
            kept = f"a copy is kept as {set_aside(path).name}"
        except OSError as copy_exc:
            kept = f"it could not be copied aside ({copy_exc.strerror or copy_exc})"
        return raw, None, f"{path.name} is unreadable ({exc}); {kept}"


def _restore(path: Path, good: bytes, damaged: bytes) -> None:
    """Write `good` over `path` if it still holds the `damaged` bytes (best effort)."""
    try:
        if path.read_bytes() == damaged:
            atomic_write_bytes(path, good)
    except (OSError, StorageError):
        pass  # the value was still read from the backup; the next write repairs the file


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON object as a line and fsync, so a crash loses at most this record; a torn
    last line gets its newline first, so it stays alone (read_jsonl skips it). Never through a
    symbolic link. Raises StorageError if the file cannot be written."""
    path = Path(path)
    line = json_bytes(record, default=str) + b"\n"
    guard_state_path(path)
    refuse_link(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise StorageError(f"could not append to {path}: {exc.strerror or exc}") from exc


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
    """An inter-process lock guarding `path` (lock file `<path>.lock`), for read-modify-write.

    Raises StorageError when the lock file is a symbolic link (taking the lock truncates
    the lock file, which must never be someone else's file).
    """
    path = Path(path)
    lock = Path(str(path) + ".lock")
    guard_state_path(lock)
    refuse_link(lock)
    path.parent.mkdir(parents=True, exist_ok=True)
    from filelock import FileLock

    return FileLock(str(lock), timeout=timeout)


# ---------------------------------------------------------------- the state folder


def refuse_link(path: Path) -> None:
    """Raise StorageError when `path` is a symbolic link (ctxagent never writes through one)."""
    if os.path.islink(path):
        raise StorageError(f"refusing to use {path}: it is a symbolic link (to {_target(path)}); ctxagent "
                           "writes its state only to real files inside the repository. Replace the link with "
                           "a real file or remove it.")


def refuse_links_below(base: Path, path: Path) -> Path:
    """`path` (inside `base`) after checking that no existing part of it below `base` is a
    symbolic link; raises StorageError naming the first one found."""
    path = Path(path)
    parts = path.relative_to(base).parts
    current = Path(base)
    for part in parts:
        current = current / part
        refuse_link(current)
    return path


def state_dir(repo: Path) -> Path:
    """`<repo>/.ctxagent`, checked but NOT created (missing is fine). Raises StorageError when
    it is a symbolic link, resolves outside `repo`, or holds a symbolic link directly inside
    it (breaker F16: a cloned repository must not choose where ctxagent writes; docs/state.md)."""
    repo = Path(repo)
    folder = repo / STATE_DIR_NAME
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return folder
    except OSError as exc:
        raise StorageError(f"cannot check the state folder {folder}: {exc.strerror or exc}") from exc
    if stat.S_ISLNK(info.st_mode):
        raise StorageError(f"refusing to use {folder}: it is a symbolic link (to {_target(folder)}), so "
                           "transcripts, backups and memory would be written outside the repository. Remove "
                           f"the link (`rm {folder}`); ctxagent then creates a real folder.")
    if os.path.dirname(os.path.realpath(folder)) != os.path.realpath(repo):
        raise StorageError(f"refusing to use {folder}: it resolves to {os.path.realpath(folder)}, outside "
                           f"the repository {repo}")
    if stat.S_ISDIR(info.st_mode):
        _refuse_links_inside(folder)
    return folder


def _refuse_links_inside(folder: Path) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError as exc:
        raise StorageError(f"cannot list the state folder {folder}: {exc.strerror or exc}") from exc
    for entry in entries:
        if entry.is_symlink():
            raise StorageError(f"refusing to use {folder}: {entry.name} inside it is a symbolic link (to "
                               f"{_target(Path(entry.path))}); ctxagent keeps its state only in real files "
                               "inside the repository. Replace the link with a real file or folder, or remove it.")


#: What to do when the repository cannot hold `.ctxagent/` (a read-only mount, another user's checkout).
NEEDS_WRITABLE = ("ctxagent keeps its sessions, snapshots and checkpoints there: make the repository writable, or "
                  "work in a writable copy (`git worktree add` or `cp -r`); `ctxagent context`, `ctxagent doctor` "
                  "and `ctxagent tool terminal` work without it")


def ensure_state_dir(repo: Path) -> Path:
    """`<repo>/.ctxagent`, created if needed with a `.gitignore` of `*`; returns it. Every writer
    of per-repository state gets its folder here (docs/state.md). Raises StorageError as
    `state_dir` does, and when `.ctxagent` is not a folder or cannot be created."""
    folder = state_dir(repo)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise StorageError(f"{folder} exists but is not a folder; move it away so ctxagent can keep its "
                           "state there") from None
    except OSError as exc:
        raise StorageError(f"cannot create the state folder {folder}: {exc.strerror or exc}. {NEEDS_WRITABLE}") from exc
    state_dir(repo)  # checked again: it must still be a real folder now that it exists
    ignore = folder / ".gitignore"
    if not os.path.lexists(ignore):
        _atomic_write(ignore, b"*\n", None)
    return folder


def guard_state_path(path: Path) -> None:
    """Before writing `path`: when it lies inside a `.ctxagent` folder, `ensure_state_dir`
    on that folder's repository, and refuse a symbolic link anywhere below it on the way
    to `path`'s folder. So every writer of state goes through one check, even one that
    forgot to call `ensure_state_dir`. Raises StorageError."""
    parents = Path(path).parts[:-1]
    if STATE_DIR_NAME not in parents:
        return
    at = len(parents) - 1 - parents[::-1].index(STATE_DIR_NAME)
    folder = ensure_state_dir(Path(*parents[:at]) if at else Path("."))
    refuse_links_below(folder, Path(*parents))


def _target(link: Path) -> str:
    try:
        return os.readlink(link)
    except OSError:
        return "?"
