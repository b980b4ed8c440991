"""Apply planned changes: back up the originals, write every file, all or nothing.

Under the writer lock (S8): check nothing changed since planning, write the journal (S5),
back up, write atomically (P06); any failure or Ctrl-C restores every original and raises
PatchError (P05) or PatchInterrupted saying what happened (docs/patch.md, "All or nothing").
"""

from __future__ import annotations

import os
import shutil
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxagent.errors import CtxAgentError, PatchError
from ctxagent.patch import paths
from ctxagent.patch.parser import parse_patch
from ctxagent.patch.plan import FileChange, PatchLimits, plan_patch
from ctxagent.storage.files import atomic_write_bytes, ensure_state_dir
from ctxagent.storage.journal import Entry, Journal, interrupts_deferred, recover, repo_lock

__all__ = ["ApplyResult", "PatchInterrupted", "apply_changes", "apply_patch_text", "plan_patch", "FileChange", "PatchLimits"]

_SYMBOL = {"add": "A", "update": "M", "delete": "D", "move": "R"}


@dataclass(frozen=True)
class ApplyResult:
    """What a patch did. `backup_dir`: folder holding the originals (None if no backup)."""

    changes: list[FileChange]
    backup_dir: Path | None = None

    def files(self) -> list[dict[str, Any]]:
        """One dict per file: {"path", "action": add|update|delete|move, "added", "removed"}
        (+ "from" for a move; a move's source is not listed separately)."""
        out = []
        for c in self.changes:
            if c.moved_to is not None:
                continue
            item = {"path": c.path, "action": c.action, "added": c.added, "removed": c.removed}
            if c.moved_from:
                item["from"] = c.moved_from
            out.append(item)
        return out

    def summary(self) -> str:
        """Compact text for the model, e.g. `M src/app.py (+2 -1)`, one file a line."""
        lines = []
        for f in self.files():
            name = f"{f['from']} -> {f['path']}" if "from" in f else f["path"]
            lines.append(f"{_SYMBOL[f['action']]} {name} (+{f['added']} -{f['removed']})")
        return "\n".join(lines) if lines else "no file changed (the patch left every file as it was)"


def apply_patch_text(
    text: str,
    workspace: Path | str,
    *,
    max_files: int = 20,
    max_changed_lines: int = 2000,
    backup: bool = True,
) -> ApplyResult:
    """Parse, plan and apply `text` in `workspace`, all or nothing. Raises PatchError."""
    limits = PatchLimits(max_files=max_files, max_changed_lines=max_changed_lines)
    changes = plan_patch(parse_patch(text), workspace, limits)
    root = paths.workspace_root(workspace)
    return apply_changes(changes, root, ensure_state_dir(root) / "backups" if backup and changes else None)


def apply_changes(changes: list[FileChange], workspace: Path | str, backup_root: Path | None) -> ApplyResult:
    """Write `changes` (from `plan_patch`) into `workspace`, all or nothing, even under a kill.

    backup_root: folder under which a fresh `<stamp>/` folder receives the originals
    (None: no backup). Raises PatchError if a file changed since planning (nothing written)
    or a write fails (everything restored); PatchInterrupted on Ctrl-C (what it did: see `_failure`).
    """
    root = paths.workspace_root(workspace)
    targets = [(c, root / c.path) for c in changes]
    if not changes:
        return ApplyResult(changes, None)
    with repo_lock(root):  # one writer per repository around check and write (S8)
        note = recover(root)  # a run that died half-way is undone before anything is checked
        if note:
            warnings.warn(note, stacklevel=2)
        journal = Journal(root, [Entry(c.path, c.old_bytes, c.old_mode) for c in changes], _new_dirs(root, targets))
        backup_dir = _prepare(targets, journal, Path(backup_root) if backup_root else None)
        try:
            for change, target in targets:
                _write(change, target)
        except BaseException as exc:
            _roll_back(changes, targets, journal, exc)
            raise
        with interrupts_deferred() as late:  # the commit point: journal.json removed
            journal.close()
        if late:
            raise PatchInterrupted(f"apply_patch: interrupted (Ctrl-C) after every file was written: the patch "
                                   f"is applied ({len(changes)} files), nothing to restore.")
    return ApplyResult(changes, backup_dir)


def _prepare(targets: list[tuple[FileChange, Path]], journal: Journal, backup_root: Path | None) -> Path | None:
    """Check the files, write the journal, then the backup (a kill during the copy is then
    swept by the recovery). On any failure or Ctrl-C nothing is left but the tree as it was."""
    folder = None
    try:
        _check_unchanged(targets)
        journal.open()
        if backup_root is not None:
            folder = _fresh_folder(backup_root)
            _backup(targets, folder)
        return folder
    except BaseException as exc:
        with interrupts_deferred():
            journal.close()
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
        if isinstance(exc, KeyboardInterrupt):
            raise PatchInterrupted("apply_patch: interrupted (Ctrl-C) before any file was written: not applied, "
                                   "nothing changed.") from exc
        if isinstance(exc, OSError):
            raise PatchError(f"apply_patch: {exc.strerror or exc} ({exc.filename}); nothing was written.") from exc
        raise


def _roll_back(changes: list[FileChange], targets: list[tuple[FileChange, Path]], journal: Journal,
               exc: BaseException) -> None:
    """After a failed or interrupted write: restore every original (a second Ctrl-C waits
    for it), then raise PatchInterrupted or PatchError saying truthfully what happened."""
    with interrupts_deferred():
        done = [_holds_new(change, target) for change, target in targets]
        problems = journal.undo()
        if not problems:
            journal.close()
    written = sum(done)
    failed = next((c for c, d in zip(changes, done) if not d), changes[-1])
    message = _failure(failed, exc, written, len(changes), problems, journal)
    if isinstance(exc, KeyboardInterrupt):
        raise PatchInterrupted(message) from exc
    if isinstance(exc, (CtxAgentError, OSError)):
        raise PatchError(message, path=failed.path) from exc


def _holds_new(change: FileChange, target: Path) -> bool:
    """Whether `target` holds what the change writes (deleted, for a deletion)."""
    if change.new_bytes is None:
        return not os.path.lexists(target)
    try:
        return target.read_bytes() == change.new_bytes
    except OSError:
        return False


class PatchInterrupted(KeyboardInterrupt):
    """Ctrl-C while a patch was being written; `report`: what happened, for the model
    (the loop sends it as the call's result instead of "not executed")."""

    def __init__(self, report: str) -> None:
        super().__init__(report)
        self.report = report


def _check_unchanged(targets: list[tuple[FileChange, Path]]) -> None:
    """Refuse when a file is not what the plan was made from (bytes and permission bits)."""
    for change, target in targets:
        current = target.read_bytes() if target.is_file() else None
        mode = target.stat().st_mode & 0o7777 if current is not None else None
        if current != change.old_bytes or (change.old_mode is not None and mode != change.old_mode):
            raise PatchError(
                f"apply_patch: {change.path} changed on disk after the patch was planned (the diff shown is "
                "no longer what would be written); nothing was written. Re-read the file and send the patch "
                "again.", path=change.path)


def _new_dirs(root: Path, targets: list[tuple[FileChange, Path]]) -> list[str]:
    """Folders (relative) the writes will create, deepest first."""
    out: set[str] = set()
    for change, target in targets:
        parent = target.parent
        while change.new_bytes is not None and parent != root and not parent.exists():
            out.add(parent.relative_to(root).as_posix())
            parent = parent.parent
    return sorted(out, key=lambda d: -d.count("/"))


def _backup(targets: list[tuple[FileChange, Path]], folder: Path) -> None:
    for change, _target in targets:
        if change.old_bytes is not None:
            atomic_write_bytes(folder / change.path, change.old_bytes, mode=change.old_mode)


def _fresh_folder(backup_root: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1000):
        folder = backup_root / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            folder.mkdir(parents=True)
            return folder
        except FileExistsError:
            continue
    raise PatchError(f"apply_patch: cannot create a backup folder under {backup_root}")


def _write(change: FileChange, target: Path) -> None:
    """Write or delete one file."""
    if change.new_bytes is None:
        target.unlink()
        return
    atomic_write_bytes(target, change.new_bytes, mode=change.mode)


def _failure(change: FileChange, exc: BaseException, written: int, total: int, problems: list[str],
              journal: Journal) -> str:
    cause = "interrupted (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else f"failed ({exc})"
    if written == 0 and not problems:
        return f"apply_patch: writing {change.path} {cause} before any file was written: not applied, nothing changed."
    message = (f"apply_patch: writing {change.path} {cause}; partially applied ({written} of {total} files "
               "written), ")
    if not problems:
        return message + "restored: every file was restored to what it was before, nothing changed."
    return (message + "and restoring failed for: " + "; ".join(problems)
            + f". The originals are in {journal.folder}; the next ctxagent command on this repository tries again.")
