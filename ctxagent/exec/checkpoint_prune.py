"""Pruning the checkpoint store: the oldest checkpoints removed, the rest restorable byte for byte.

`select_prunable` picks the oldest checkpoints to go (always a run from the first one: a
kept checkpoint restores by reverting every later change, so none of those may vanish);
`prune_store` removes them: the kept snapshots (checkpoint and after trees, unchanged)
are chained into new commits on `PRUNE_REF`, the new log replaces the old one atomically,
the head ref moves, and `compact` drops what nothing reaches. A kill at any point leaves
the old or the new state, each complete. Reference: docs/checkpoints.md.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from ctxagent.errors import StorageError, ToolInputError
from ctxagent.exec.checkpoints import HEAD_REF, PRUNE_REF, Checkpoint, CheckpointError, CheckpointStore
from ctxagent.exec.compact import compact
from ctxagent.storage.files import atomic_write_bytes, json_bytes, read_jsonl


@dataclass
class PruneResult:
    """What a prune removed (or would, `dry_run`): `removed` checkpoints, `kept` (how many stay), store
    size in bytes `before` and `after` (None on a dry run), `estimate`: bytes a dry run would free,
    `stopped`: why the oldest checkpoint kept stays (None when none is kept)."""

    removed: list[Checkpoint]
    kept: int
    before: int
    after: int | None
    dry_run: bool
    estimate: int | None = None
    stopped: str | None = None

    @property
    def freed(self) -> int:
        """Bytes the store shrank by; on a dry run the estimate (0 when unknown)."""
        return (self.estimate or 0) if self.after is None else max(0, self.before - self.after)


def select_prunable(checkpoints: list[Checkpoint], **select: object) -> list[Checkpoint]:
    """The oldest checkpoints (list, oldest first) that go: created over `older_than_s` seconds
    ago, not among the `keep` newest, of `sessions` (when given); it stops at the first one
    that stays, of a `protected` session or younger than `recent_s`. Raises ToolInputError."""
    return _select(checkpoints, **select)[0]


def _select(checkpoints: list[Checkpoint], *, older_than_s: float | None = None, keep: int | None = None,
            sessions: set[str] | None = None, protected: frozenset[str] | set[str] = frozenset(), recent_s: float = 3600.0,
            now: float | None = None) -> tuple[list[Checkpoint], str | None]:
    """`select_prunable` and why the first checkpoint that stays stays (None: none stays)."""
    if older_than_s is None and keep is None and sessions is None:
        raise ToolInputError("say what to prune: --older-than AGE (e.g. 30d), --keep N, or both")
    if keep is not None and keep < 0:
        raise ToolInputError(f"--keep must be 0 or more, not {keep}")
    if older_than_s is not None and older_than_s < 0:
        raise ToolInputError(f"the age must be 0 or more seconds, not {older_than_s:g}")
    now = time.time() if now is None else now
    out: list[Checkpoint] = []
    for rank, cp in enumerate(sorted(checkpoints, key=lambda c: c.number)):
        why = (f"of session {cp.session_id}, used in the last hour" if cp.session_id in protected
               else "recorded in the last hour" if now - cp.created < recent_s
               else f"among the {keep} newest" if keep is not None and len(checkpoints) - rank <= keep
               else f"of session {cp.session_id}, not removed" if sessions is not None and cp.session_id not in sessions
               else "newer than --older-than" if older_than_s is not None and now - cp.created <= older_than_s
               else None)
        if why:
            return out, f"checkpoint {cp.number} is {why}"
        out.append(cp)
    return out, None


def store_bytes(store: CheckpointStore) -> int:
    """Bytes on disk of the store's files (repository, log), int."""
    total = 0
    for folder, _dirs, files in os.walk(store.root):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def estimate_freed(store: CheckpointStore, removed: list[Checkpoint], kept: list[Checkpoint]) -> int | None:
    """Bytes on disk of the objects only `removed` reach (`git rev-list --disk-usage`, git 2.31+);
    None when git cannot say. The store after a repack may differ a little."""
    gone = {t for c in removed for t in (c.tree, c.after) if t}
    if not gone:
        return 0
    stay = {t for c in kept for t in (c.tree, c.after) if t}
    revs = "\n".join([*sorted(gone), *(f"^{t}" for t in sorted(stay))]) + "\n"
    try:
        return int(store.git.run("rev-list", "--objects", "--disk-usage", "--stdin", input=revs.encode()).strip())
    except (StorageError, ValueError):
        return None


def prune_store(store: CheckpointStore, *, dry_run: bool = False, **select: object) -> PruneResult:
    """Remove the checkpoints `select_prunable(**select)` picks (the log read under the store's
    lock) and compact the store. Raises ToolInputError (bad selection), CheckpointError (git
    or the disk failed: the old store stays as it was, or the new one is complete)."""
    _select([], **select)  # bad input refused before anything is opened
    before = store_bytes(store)
    if not store.log_path.is_file():  # no log: nothing to prune, no store to create
        return PruneResult([], 0, before, None if dry_run else before, dry_run, 0)
    with store.locked():  # also for a dry run: its git must not pass for a killed run's (reap_orphan)
        everything = store.checkpoints()
        removed, why = _select(everything, **select)
        if dry_run:
            estimate = estimate_freed(store, removed, everything[len(removed):])
            return PruneResult(removed, len(everything) - len(removed), before, None, True, estimate, why)
        if removed:
            _rewrite(store, {c.number for c in removed})
    return PruneResult(removed, len(everything) - len(removed), before, store_bytes(store), False, None, why)


def _rewrite(store: CheckpointStore, gone: set[int]) -> None:
    """The prune itself, under the lock: new chain, new log (the commit point), head, compact."""
    try:
        records = read_jsonl(store.log_path)
    except OSError as exc:
        raise CheckpointError(f"cannot read {store.log_path}: {exc.strerror or exc}") from exc
    last = max(gone)
    kept = []
    for rec in records:
        number = rec.get("number")
        if rec.get("kind") == "pruned":
            last = max(last, number) if isinstance(number, int) else last
        elif not (isinstance(number, int) and number in gone):
            kept.append(rec)
    snapshots = [r for r in kept if r.get("kind") in ("checkpoint", "after") and isinstance(r.get("tree"), str)]
    commits = _chain(store, snapshots)
    for rec, commit in zip(snapshots, commits):
        rec["commit"] = commit
    mark = {"kind": "pruned", "number": last, "removed": len(gone), "time": time.time()}
    data = b"".join(json_bytes(r, default=str) + b"\n" for r in [mark, *kept])
    ref, prune_ref = store.git.git_dir / HEAD_REF, store.git.git_dir / PRUNE_REF
    try:
        atomic_write_bytes(store.log_path, data)  # the commit point
        if commits:
            atomic_write_bytes(ref, commits[-1].encode() + b"\n")
        else:
            ref.unlink(missing_ok=True)
        prune_ref.unlink(missing_ok=True)
        compact(store.git)
    except (OSError, StorageError) as exc:
        raise CheckpointError(f"pruning the checkpoint store stopped half-way ({exc}); every checkpoint "
                              "listed is still restorable, run the prune again to finish") from exc


def _chain(store: CheckpointStore, snapshots: list[dict]) -> list[str]:
    """New commits for `snapshots` (each a log record with its tree), oldest first, each the
    parent of the next, written by one `git fast-import` onto PRUNE_REF; their ids."""
    (store.git.git_dir / PRUNE_REF).unlink(missing_ok=True)  # a killed prune's, rebuilt now
    if not snapshots:
        return []
    marks = store.git.git_dir / "prune-marks"
    stream = []
    created = {r.get("number"): r.get("created") for r in snapshots if r["kind"] == "checkpoint"}
    for i, rec in enumerate(snapshots, 1):
        message = (f"checkpoint {rec.get('tool')}: {rec.get('label')}"[:200] if rec["kind"] == "checkpoint"
                   else f"after checkpoint {rec.get('number')}").encode()
        stamp = int(float(created.get(rec.get("number")) or time.time()))
        stream.append(b"commit %s\nmark :%d\ncommitter ctxagent <ctxagent@localhost> %d +0000\ndata %d\n%s\n"
                      % (PRUNE_REF.encode(), i, stamp, len(message), message))
        if i > 1:
            stream.append(b"from :%d\ndeleteall\n" % (i - 1))
        stream.append(b'M 040000 %s ""\n\n' % rec["tree"].encode())
    stream.append(b"done\n")
    try:
        store.git.run("fast-import", "--quiet", "--done", f"--export-marks={marks}", input=b"".join(stream))
        found = dict(line.split() for line in marks.read_text(encoding="ascii").splitlines() if line)
        commits = [found[f":{i}"] for i in range(1, len(snapshots) + 1)]
        listed = store.git.run("log", "--format=%T", "--first-parent", "--reverse", PRUNE_REF).decode().split()
    except (OSError, KeyError, ValueError, StorageError) as exc:
        raise CheckpointError(f"cannot prune the checkpoint store: {exc}; nothing was removed") from exc
    finally:
        for leftover in [marks, *store.git.git_dir.glob("fast_import_crash_*")]:  # its crash reports too
            Path(leftover).unlink(missing_ok=True)
    if listed != [rec["tree"] for rec in snapshots]:
        raise CheckpointError("cannot prune the checkpoint store: the new chain does not hold the same trees; "
                              "nothing was removed")
    return commits
