"""Apply planned changes: back up the originals, write every file, all or nothing.

`plan_patch` (from `plan.py`) has already validated every path and located every hunk.
`apply_changes` then:
1. checks that no file changed on disk since it was planned (else nothing is written);
2. copies every original to `<workspace>/.ctxagent/backups/<stamp>/<relpath>`;
3. writes each file atomically (`storage.atomic_write_bytes`, permission bits kept,
   case P06) or deletes it;
4. if any step of 3 fails, restores the files already written from the bytes held in
   memory, removes files and folders it created, and raises PatchError (case P05).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxagent.errors import CtxAgentError, PatchError
from ctxagent.patch import paths
from ctxagent.patch.parser import parse_patch
from ctxagent.patch.plan import FileChange, PatchLimits, plan_patch
from ctxagent.storage.files import atomic_write_bytes, ensure_state_dir

__all__ = ["ApplyResult", "apply_changes", "apply_patch_text", "plan_patch", "FileChange", "PatchLimits"]

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
    """Write `changes` (from `plan_patch`) into `workspace`, all or nothing.

    backup_root: folder under which a fresh `<stamp>/` folder receives the originals
    (None: no backup). Raises PatchError if a file changed since planning or cannot be
    read or backed up (nothing written), or if a write fails (everything restored);
    StorageError if the backup folder is refused (`ctxagent.storage.files`).
    """
    root = paths.workspace_root(workspace)
    targets = [(c, root / c.path) for c in changes]
    try:
        _check_unchanged(targets)
        backup_dir = _backup(targets, Path(backup_root)) if backup_root and changes else None
    except OSError as exc:
        raise PatchError(f"apply_patch: {exc.strerror or exc} ({exc.filename}); nothing was written.") from exc
    done: list[tuple[FileChange, Path, list[Path]]] = []
    for change, target in targets:
        try:
            done.append((change, target, _write(change, target)))
        except (CtxAgentError, OSError) as exc:
            problems = _rollback(done)
            raise PatchError(_failure(change, exc, problems, backup_dir), path=change.path) from exc
    return ApplyResult(changes, backup_dir)


def _check_unchanged(targets: list[tuple[FileChange, Path]]) -> None:
    for change, target in targets:
        current = target.read_bytes() if target.is_file() else None
        if current != change.old_bytes:
            raise PatchError(
                f"apply_patch: {change.path} changed on disk after the patch was checked; "
                "nothing was written. Re-read the file and send the patch again.", path=change.path)


def _backup(targets: list[tuple[FileChange, Path]], backup_root: Path) -> Path:
    folder = _fresh_folder(backup_root)
    for change, _target in targets:
        if change.old_bytes is not None:
            atomic_write_bytes(folder / change.path, change.old_bytes, mode=change.old_mode)
    return folder


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


def _write(change: FileChange, target: Path) -> list[Path]:
    """Write or delete one file; return the folders created for it (deepest first)."""
    if change.new_bytes is None:
        target.unlink()
        return []
    created = []
    parent = target.parent
    while not parent.exists():
        created.append(parent)
        parent = parent.parent
    atomic_write_bytes(target, change.new_bytes, mode=change.mode)
    return created


def _rollback(done: list[tuple[FileChange, Path, list[Path]]]) -> list[str]:
    """Undo writes in reverse order from the bytes in memory; return what failed."""
    problems = []
    for change, target, created in reversed(done):
        try:
            if change.old_bytes is None:
                target.unlink(missing_ok=True)
            else:
                atomic_write_bytes(target, change.old_bytes, mode=change.old_mode)
        except (CtxAgentError, OSError) as exc:
            problems.append(f"{change.path}: {exc}")
        for folder in created:
            try:
                os.rmdir(folder)
            except OSError:
                pass  # not empty or already gone: leaving a folder is harmless
    return problems


def _failure(change: FileChange, exc: Exception, problems: list[str], backup_dir: Path | None) -> str:
    message = f"apply_patch: writing {change.path} failed ({exc}); "
    if not problems:
        return message + "every file was restored, nothing changed."
    return (message + "and restoring failed for: " + "; ".join(problems)
            + f". The originals are in {backup_dir}.")
