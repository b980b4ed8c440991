"""A change of several files in a repository that is all or nothing, even under SIGKILL.

`Journal.open` writes the originals, then `journal.json`; `close` removes it once every
file is written. `recover(repo)` (under `repo_lock`, at the next start: `recover_pending`)
undoes a run that died half-way (issue 17, S5). Format and lock: docs/patch.md.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout

from ctxagent.errors import StorageError
from ctxagent.storage.files import (
    LOCK_TIMEOUT_S,
    STATE_DIR_NAME,
    TMP_PREFIX,
    atomic_write_bytes,
    ensure_state_dir,
    file_lock,
    fsync_dir,
    json_bytes,
    state_dir,
)

#: Folder of the open journal, inside `.ctxagent`.
JOURNAL_DIR = "journal"
#: The lock every writer of the repository's files holds around check and write (S8).
LOCK_NAME = "write"
_PROTECTED = (".git", STATE_DIR_NAME)


@dataclass
class Entry:
    """One file of a journal. path: repository-relative POSIX path; old: bytes before
    (None: the file did not exist); old_mode: its permission bits."""

    path: str
    old: bytes | None
    old_mode: int | None = None


@dataclass
class Journal:
    """The originals of `entries` in `repo`, and the folders `dirs` (relative) the change may create."""

    repo: Path
    entries: list[Entry]
    dirs: list[str] = field(default_factory=list)

    @property
    def folder(self) -> Path:
        return Path(self.repo) / STATE_DIR_NAME / JOURNAL_DIR

    def open(self) -> None:
        """Write the originals, then journal.json (fsynced). Raises StorageError."""
        ensure_state_dir(Path(self.repo))
        if self.folder.exists():
            shutil.rmtree(self.folder)
        files = []
        for n, entry in enumerate(self.entries):
            if entry.old is not None:
                atomic_write_bytes(self.folder / "orig" / str(n), entry.old, mode=0o600)
            files.append({"path": entry.path, "existed": entry.old is not None, "mode": entry.old_mode})
        atomic_write_bytes(self.folder / "journal.json", json_bytes({"files": files, "dirs": self.dirs}))

    def close(self) -> None:
        """The change is complete (or undone): remove the journal."""
        try:
            os.unlink(self.folder / "journal.json")
        except FileNotFoundError:
            pass
        fsync_dir(self.folder)
        shutil.rmtree(self.folder, ignore_errors=True)

    def undo(self) -> list[str]:
        """Put every original back, remove created files, folders and temporary files;
        return what could not be restored ("path: error"), empty when all was."""
        root = Path(self.repo)
        problems = []
        for entry in reversed(self.entries):
            try:
                target = _inside(root, entry.path)
                if entry.old is None:
                    if os.path.lexists(target) and not os.path.isdir(target):  # a folder was never ours
                        os.unlink(target)
                elif not _holds(target, entry.old, entry.old_mode):
                    atomic_write_bytes(target, entry.old, mode=entry.old_mode)
            except (OSError, StorageError) as exc:
                problems.append(f"{entry.path}: {exc}")
        folders = {os.path.dirname(e.path) for e in self.entries} | set(self.dirs)
        for rel in sorted(folders, key=lambda d: -d.count("/")):
            _sweep_temps(root / rel)
        for rel in sorted(self.dirs, key=lambda d: -d.count("/")):
            try:
                os.rmdir(root / rel)
            except OSError:
                pass  # not empty or gone: leaving a folder is harmless
        return problems


@contextmanager
def interrupts_deferred() -> Iterator[list[int]]:
    """Hold Ctrl-C (SIGINT) back while the block runs: a rollback or a commit is not cut in
    two. Yields the list the signals that came are appended to (the caller decides what to
    raise after). Outside the main thread (no signal arrives there) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield []
        return
    got: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: got.append(signum))
    try:
        yield got
    finally:
        signal.signal(signal.SIGINT, previous)


def repo_lock(repo: Path, timeout: float = LOCK_TIMEOUT_S) -> FileLock:
    """The repository's writer lock (`.ctxagent/write.lock`). Raises StorageError."""
    return file_lock(ensure_state_dir(Path(repo)) / LOCK_NAME, timeout=timeout)


def recover(repo: Path) -> str | None:
    """Finish or undo a journal left by a run that died; the caller holds `repo_lock`.

    Returns a sentence saying what was done, None when there was no journal.
    Raises StorageError when an original cannot be put back (the journal is kept).
    """
    folder = state_dir(Path(repo)) / JOURNAL_DIR
    if not os.path.lexists(folder):
        return None
    journal = _load(Path(repo), folder)
    if journal is None:  # died before journal.json existed (nothing written) or after all was written
        shutil.rmtree(folder, ignore_errors=True)
        _sweep_temps(state_dir(Path(repo)) / "backups", recursive=True)
        return None
    problems = journal.undo()
    if problems:
        raise StorageError(f"an interrupted patch could not be undone in {repo}: {'; '.join(problems)}. The "
                           f"originals are in {folder / 'orig'} (listed in journal.json).")
    journal.close()
    _sweep_temps(state_dir(Path(repo)) / "backups", recursive=True)
    return (f"a patch interrupted earlier in {repo} was undone: {len(journal.entries)} file(s) restored to "
            "what they were before it")


def recover_pending(repo: Path, timeout: float = 5.0) -> str | None:
    """`recover` under `repo_lock` when a journal is present (cheap when there is none).
    A writer still holding the lock after `timeout` seconds is left alone (None)."""
    try:
        if not os.path.isdir(Path(repo) / STATE_DIR_NAME / JOURNAL_DIR):
            return None
        with repo_lock(repo, timeout=timeout):
            return recover(repo)
    except Timeout:
        return None


def _load(repo: Path, folder: Path) -> Journal | None:
    try:
        record = json.loads((folder / "journal.json").read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise StorageError(f"the patch journal {folder / 'journal.json'} is unreadable ({exc}); restore the "
                           f"files from {folder / 'orig'} by hand, then remove {folder}.") from exc
    entries = []
    for n, item in enumerate(record["files"]):
        old = (folder / "orig" / str(n)).read_bytes() if item["existed"] else None
        entries.append(Entry(str(item["path"]), old, item.get("mode")))
    return Journal(repo, entries, [str(d) for d in record.get("dirs", [])])


def _inside(root: Path, rel: str) -> Path:
    """`root/rel` after checking it stays in the repository outside .git and .ctxagent
    (a journal is read back from disk, so it is not trusted)."""
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts or any(p.casefold() in _PROTECTED for p in parts):
        raise StorageError(f"refusing journal path {rel!r}")
    target = root / rel
    real = os.path.realpath(target.parent)
    if os.path.commonpath([real, os.path.realpath(root)]) != os.path.realpath(root) or os.path.islink(target):
        raise StorageError(f"refusing journal path {rel!r}: it leads outside the repository or is a link")
    return target


def _holds(target: Path, data: bytes, mode: int | None) -> bool:
    try:
        return target.read_bytes() == data and (mode is None or target.stat().st_mode & 0o7777 == mode)
    except OSError:
        return False


def _sweep_temps(folder: Path, recursive: bool = False) -> None:
    """Remove `.ctxtmp-*.tmp` files an atomic write killed half-way left in `folder`."""
    pattern = f"{'**/' if recursive else ''}{TMP_PREFIX}*.tmp"
    try:
        for tmp in Path(folder).glob(pattern):
            if tmp.is_file() and not tmp.is_symlink():
                tmp.unlink(missing_ok=True)
    except OSError:
        pass
