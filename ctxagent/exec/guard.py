"""Checkpoint around one change: recorded before it, its files listed after it.

`CheckpointGuard` is what a tool that writes files holds (`ApplyPatchTool.checkpoints`):
`before` records the checkpoint (CheckpointError: refuse the change), `after` records the
after-state and says which files changed. The agent keeps `turn` current.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ctxagent.errors import StorageError
from ctxagent.exec.checkpoints import Checkpoint, CheckpointError, CheckpointStore, FileChange

log = logging.getLogger(__name__)


class CheckpointGuard:
    """Checkpoints of one tool in `repo`, tagged with `session_id` and the current `turn`."""

    def __init__(self, repo: Path, *, session_id: str | None = None, turn: int = 0) -> None:
        self.repo = Path(repo)
        self.session_id = session_id or "cli"
        self.turn = turn
        self._store: CheckpointStore | None = None

    @property
    def store(self) -> CheckpointStore:
        """The repository's store, opened on first use. Raises CheckpointError."""
        if self._store is None:
            try:
                self._store = CheckpointStore.for_repo(self.repo)
            except StorageError as exc:
                raise CheckpointError(str(exc)) from exc
        return self._store

    def before(self, tool: str, label: str) -> Checkpoint:
        """Record the working tree before a change. Raises CheckpointError (refuse the change)."""
        return self.store.record(session_id=self.session_id, turn=self.turn, tool=tool, label=label[:200])

    def after(self, cp: Checkpoint) -> list[FileChange] | None:
        """The files the change touched (None when the after-state cannot be recorded: the
        change happened, and `/undo` still restores it from the checkpoint)."""
        try:
            return self.store.changes_since(cp)
        except CheckpointError as exc:
            log.warning("checkpoint %s: the state after the change was not recorded: %s", cp.number, exc)
            return None
