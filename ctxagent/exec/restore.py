"""Restoring checkpoints: the files of `/undo`, `/rewind`, `ctxagent undo` and `checkpoints --restore`.

`plan_restore(store, target)` works out which files the changes from `target` on touched
(modified, created, deleted), what each should go back to, and which of them the user
edited by hand since a change wrote them (those are never overwritten unless asked).
`apply_restore` records a checkpoint first (so a restore is itself undoable), then writes
every file through the patch journal, all or nothing even under SIGKILL.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ctxagent.errors import StorageError
from ctxagent.exec.checkpoints import RESTORE_TOOLS, Checkpoint, CheckpointError, CheckpointStore, FileChange, Snapshot
from ctxagent.storage.files import atomic_write_bytes
from ctxagent.storage.journal import Entry, Journal, recover, repo_lock


@dataclass(frozen=True)
class FileRestore:
    """One file a restore puts back. action: restore (write the checkpoint's bytes) or
    remove (the change created it); edited: the user changed it after the change did."""

    path: str
    action: Literal["restore", "remove"]
    edited: bool = False


@dataclass
class RestorePlan:
    """What restoring `target` would do. undone: the checkpoints whose changes it reverts;
    skipped: files it cannot put back (over the size limit when recorded, links)."""

    target: Checkpoint
    undone: list[Checkpoint]
    files: list[FileRestore]
    skipped: list[str]
    current: Snapshot = field(repr=False)

    @property
    def edited(self) -> list[FileRestore]:
        """The files edited by hand since the change: listed, and asked about."""
        return [f for f in self.files if f.edited]


@dataclass
class RestoreResult:
    """What a restore did: `restored` files, `kept` (edited by hand, left alone), and the
    checkpoint recorded just before (restoring that one undoes the restore)."""

    restored: list[FileRestore]
    kept: list[FileRestore]
    checkpoint: Checkpoint


def last_change(store: CheckpointStore, session_id: str | None = None) -> Checkpoint | None:
    """The checkpoint of the newest change not undone yet (restores themselves passed over)."""
    for cp in reversed(store.checkpoints(session_id)):
        if not cp.undone and cp.tool not in RESTORE_TOOLS:
            return cp
    return None


def plan_restore(store: CheckpointStore, target: Checkpoint, session_id: str | None = None) -> RestorePlan:
    """Plan going back to `target`: the changes from it on (of `session_id` only, when
    given) are reverted. Writes nothing but a snapshot. Raises CheckpointError."""
    everything = store.checkpoints()
    chain = [c for c in everything if c.number >= target.number
             and (session_id is None or c.session_id == session_id or c.number == target.number)]
    current = store.snapshot()
    latest: dict[str, Checkpoint] = {}  # path -> newest checkpoint whose change touched it
    mine: set[str] = set()  # paths of the changes being reverted now
    afters: dict[int, str] = {}
    for cp in chain:
        afters[cp.number] = _after(cp, everything, current)
        for change in store.diff_trees(cp.tree, afters[cp.number]):
            latest[change.path] = cp
            if cp.number == target.number or not cp.undone:  # a restore still in effect too (a redo's files)
                mine.add(change.path)
    edited: set[str] = set()
    for number in {cp.number for cp in latest.values()}:
        differs = {c.path for c in store.diff_trees(afters[number], current.tree)}
        edited |= {p for p, cp in latest.items() if cp.number == number and p in differs}
    differing = {c.path: c.kind for c in store.diff_trees(target.tree, current.tree)}
    skipped = sorted(p for p in mine if p in target.skipped or p in current.skipped)
    files = [FileRestore(p, "remove" if differing[p] == "created" else "restore", p in edited)
             for p in sorted(mine) if p in differing and p not in skipped]
    undone = [c for c in chain if c.number == target.number or not c.undone]
    return RestorePlan(target, undone, files, skipped, current)


def apply_restore(store: CheckpointStore, plan: RestorePlan, *, overwrite_edited: bool, session_id: str,
                  turn: int, tool: Literal["undo", "rewind"]) -> RestoreResult:
    """Write `plan` (edited files only when `overwrite_edited`), all or nothing.

    Raises CheckpointError when the tree changed since the plan (nothing written), the
    checkpoint before it cannot be recorded, or a write fails (everything put back)."""
    todo = [f for f in plan.files if overwrite_edited or not f.edited]
    kept = [f for f in plan.files if f not in todo]
    safety = store.record(session_id=session_id, turn=turn, tool=tool,
                          label=f"before restoring checkpoint {plan.target.number}")
    if safety.tree != plan.current.tree:
        raise CheckpointError("files changed while the restore was being confirmed; nothing was restored. "
                              "Run it again to see the new list.")
    entries = store.entries(plan.target.tree, [f.path for f in todo if f.action == "restore"])
    wanted = {path: (mode, store.blob(oid)) for path, (mode, oid) in entries.items()}
    write_files(store.repo, todo, wanted)
    store.changes_since(safety)
    store.mark_undone([c.number for c in plan.undone])
    _invalidate(store.repo, [f.path for f in todo])
    return RestoreResult(todo, kept, safety)


def _after(cp: Checkpoint, everything: list[Checkpoint], current: Snapshot) -> str:
    """The tree `cp`'s change left: recorded by `changes_since`, else the next
    checkpoint's tree, else the tree now."""
    if cp.after:
        return cp.after
    later = [c for c in everything if c.number > cp.number]
    return later[0].tree if later else current.tree


def write_files(repo: Path, todo: list[FileRestore], wanted: dict[str, tuple[str, bytes]]) -> None:
    """Write `todo` (wanted: path -> (git mode, bytes)) under the repository's writer lock
    and the patch journal: all or nothing. Raises CheckpointError (everything put back)."""
    with repo_lock(repo):
        recover(repo)
        entries = []
        for f in todo:
            target = repo / f.path
            if os.path.islink(target) or wanted.get(f.path, ("",))[0] == "120000":
                continue  # links are put back outside the journal, which holds file bytes
            old = target.read_bytes() if target.is_file() else None
            entries.append(Entry(f.path, old, stat.S_IMODE(target.stat().st_mode) if old is not None else None))
        journal = Journal(repo, entries, _new_dirs(repo, todo))
        try:
            journal.open()
            for f in todo:
                _put(repo, f, wanted.get(f.path))
        except BaseException as exc:
            problems = journal.undo()
            if not problems:
                journal.close()
            if isinstance(exc, (OSError, StorageError)):
                raise CheckpointError(f"restoring failed ({exc}); every file was put back as it was"
                                      + (f", except: {'; '.join(problems)}" if problems else "")) from exc
            raise
        journal.close()
        for f in todo:
            if f.action == "remove":
                _prune(repo, (repo / f.path).parent)


def _put(repo: Path, f: FileRestore, wanted: tuple[str, bytes] | None) -> None:
    target = repo / f.path
    if f.action == "remove" or wanted is None:
        if os.path.lexists(target) and not os.path.isdir(target):
            os.unlink(target)
        return
    mode, data = wanted
    if mode == "120000":
        if os.path.lexists(target) and not os.path.isdir(target):
            os.unlink(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.fsdecode(data), target)
        return
    old = stat.S_IMODE(os.stat(target).st_mode) if target.is_file() else 0o644
    bits = old | (old & 0o444) >> 2 if mode == "100755" else old & ~0o111  # x wherever r, or no x
    atomic_write_bytes(target, data, mode=bits)


def _new_dirs(repo: Path, todo: list[FileRestore]) -> list[str]:
    out: set[str] = set()
    for f in todo:
        parent = (repo / f.path).parent
        while f.action == "restore" and parent != repo and not parent.exists():
            out.add(parent.relative_to(repo).as_posix())
            parent = parent.parent
    return sorted(out, key=lambda d: -d.count("/"))


def _prune(repo: Path, folder: Path) -> None:
    """Remove folders a removed file leaves empty, up to the repository."""
    while folder != repo and repo in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _invalidate(repo: Path, paths: list[str]) -> None:
    from ctxagent.fetch.cache import invalidate  # context_fetch must not serve pre-restore text

    try:
        invalidate(repo, paths)
    except Exception:  # a stale cache entry is re-read later; the restore itself succeeded
        pass


def change_files(store: CheckpointStore, cp: Checkpoint, everything: list[Checkpoint]) -> list[FileChange] | None:
    """What `cp`'s change touched, for listings (None when not known yet: no after-state
    was recorded and no later checkpoint exists). Raises CheckpointError."""
    later = [c for c in everything if c.number > cp.number]
    after = cp.after or (later[0].tree if later else None)
    return None if after is None else store.diff_trees(cp.tree, after)
