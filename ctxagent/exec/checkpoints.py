"""Checkpoints: the working tree recorded before every change, in a shadow git repository.

`CheckpointStore.for_repo(repo)` keeps `.ctxagent/checkpoints/` (its own GIT_DIR and index;
the work tree is the repository). `record` snapshots the tree before a change (patch,
command, python_exec) and `changes_since` snapshots it after, returning what the change
created, modified or deleted. A persistent index caches stat data, so a snapshot rehashes
only changed files. Narrative and layout: docs/checkpoints.md.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from ctxagent.errors import StorageError
from ctxagent.exec.bulk import import_files
from ctxagent.exec.compact import compact_if_due
from ctxagent.exec.shadow_git import GitFailed, ShadowGit
from ctxagent.storage.files import (
    TMP_PREFIX,
    append_jsonl,
    atomic_write_bytes,
    ensure_state_dir,
    file_lock,
    read_jsonl,
    state_dir,
)

log = logging.getLogger(__name__)

#: Folder of the store inside `.ctxagent`.
STORE_DIR = "checkpoints"
#: Files larger than this (bytes) are not recorded; a checkpoint lists them as skipped.
MAX_FILE_BYTES = 10 * 1024 * 1024
#: The ref that holds the chain of snapshots (newest first).
HEAD_REF = "refs/ctxagent/head"
#: Tools whose checkpoints are restores themselves: `/undo` passes over them.
RESTORE_TOOLS = frozenset({"undo", "rewind"})
#: The ref a prune builds the new chain on before the log and head move to it (checkpoint_prune).
PRUNE_REF = "refs/ctxagent/prune-new"
_STALE_LOCKS = ("index.lock", "HEAD.lock", "packed-refs.lock", "config.lock", "refs/ctxagent/head.lock",
                f"{PRUNE_REF}.lock")
_DAMAGE = ("corrupt", "bad object", "not a git repository", "unable to read", "invalid object",
           "bad signature", "index file smaller", "unknown index entry", "broken", "does not point to a valid")

ChangeKind = Literal["created", "modified", "deleted"]


class CheckpointError(StorageError):
    """A checkpoint could not be recorded or restored (disk full, store unwritable, git
    missing). Before a change it means: refuse the change, do not run it unrecorded."""


@dataclass(frozen=True)
class FileChange:
    """One file a change touched. path: repository-relative POSIX path."""

    path: str
    kind: ChangeKind


@dataclass(frozen=True)
class Checkpoint:
    """The working tree before one change. number: 1, 2... in this store; tree: git tree id.

    skipped: paths not recorded (over the size limit, nested git repositories). notice: a
    warning the caller should show (a damaged store was set aside), else None.
    """

    number: int
    commit: str
    tree: str
    session_id: str
    turn: int
    tool: str
    label: str
    created: float
    skipped: tuple[str, ...] = ()
    notice: str | None = None
    after: str | None = field(default=None, compare=False)
    undone: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class Snapshot:
    """The working tree as the store sees it now: tree id and the skipped paths."""

    tree: str
    skipped: tuple[str, ...]


class CheckpointStore:
    """The checkpoints of one repository. Cheap to create; git runs on first use."""

    def __init__(self, repo: Path, *, max_file_bytes: int = MAX_FILE_BYTES) -> None:
        self.repo = Path(repo).resolve()
        self.max_file_bytes = max_file_bytes
        self.root = state_dir(self.repo) / STORE_DIR
        self.git = ShadowGit(self.root / "git", self.repo)
        self.log_path = self.root / "log.jsonl"
        self._checked = False

    @classmethod
    def for_repo(cls, repo: Path) -> CheckpointStore:
        """The store of `repo` (`<repo>/.ctxagent/checkpoints/`). Raises StorageError when
        `.ctxagent` is refused (a symbolic link...)."""
        return cls(repo)

    def record(self, *, session_id: str, turn: int, tool: str, label: str) -> Checkpoint:
        """Snapshot the working tree before a change and return its checkpoint.

        Raises CheckpointError (disk full, store unwritable, git missing): the change must
        then be refused. A damaged store is set aside and a new one started (`notice`)."""
        with self._locked() as notice:
            snap = self._snapshot_retrying()
            commit = self._commit(snap.tree, f"checkpoint {tool}: {label}"[:200])
            number = self._next_number()
            cp = Checkpoint(number, commit, snap.tree, session_id, int(turn), tool, label, time.time(),
                            snap.skipped, notice or self._take_notice())
            self._append({"kind": "checkpoint", "number": number, "commit": commit, "tree": snap.tree,
                          "session_id": session_id, "turn": int(turn), "tool": tool, "label": label,
                          "created": cp.created, "skipped": list(snap.skipped)})
            return cp

    def changes_since(self, cp: Checkpoint) -> list[FileChange]:
        """Snapshot the tree after `cp`'s change (kept, so a restore can tell hand edits
        apart) and return the files created, modified or deleted since `cp`, sorted by path.
        Raises CheckpointError."""
        with self._locked():
            snap = self._snapshot_retrying()
            commit = self._commit(snap.tree, f"after checkpoint {cp.number}")
            self._append({"kind": "after", "number": cp.number, "commit": commit, "tree": snap.tree,
                          "skipped": list(snap.skipped)})
            compact_if_due(self.git)  # after the change ran: a repack of loose objects now and then
            return self._diff(cp, snap)

    def checkpoints(self, session_id: str | None = None) -> list[Checkpoint]:
        """Every checkpoint, oldest first (only `session_id`'s when given). Reads the log only."""
        if not self.log_path.is_file():
            return []
        try:
            records = read_jsonl(self.log_path)
        except OSError as exc:
            raise CheckpointError(f"cannot read {self.log_path}: {exc.strerror or exc}") from exc
        found: dict[int, Checkpoint] = {}
        for rec in records:
            try:
                number = int(rec["number"])
                if rec.get("kind") == "checkpoint":
                    found[number] = Checkpoint(number, str(rec["commit"]), str(rec["tree"]), str(rec["session_id"]),
                                               int(rec["turn"]), str(rec["tool"]), str(rec["label"]),
                                               float(rec["created"]), tuple(rec.get("skipped") or ()))
                elif rec.get("kind") == "after" and number in found:
                    found[number] = replace(found[number], after=str(rec["tree"]))
                elif rec.get("kind") == "undone" and number in found:
                    found[number] = replace(found[number], undone=True)
            except (KeyError, TypeError, ValueError):
                continue  # a record this version cannot read is passed over
        out = sorted(found.values(), key=lambda c: c.number)
        return [c for c in out if session_id is None or c.session_id == session_id]

    def pruned_through(self) -> int:
        """The highest checkpoint number a prune removed (the log's first record), 0 when none."""
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as handle:
                first = json.loads(handle.readline() or "{}")
        except (OSError, ValueError):
            return 0
        number = first.get("number") if isinstance(first, dict) and first.get("kind") == "pruned" else 0
        return number if isinstance(number, int) else 0

    def locked(self) -> AbstractContextManager[str | None]:
        """The store's lock held (stale git locks cleared, store created or repaired), for
        `checkpoint_prune`. Raises CheckpointError when the store cannot be opened."""
        return self._locked()

    def head(self) -> str | None:
        """The newest snapshot commit, None before the first. Raises ValueError (damaged ref)."""
        return self._head()

    # -- used by ctxagent.exec.restore ------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Snapshot the working tree now (no checkpoint). Raises CheckpointError."""
        with self._locked():
            return self._snapshot_retrying()

    def mark_undone(self, numbers: list[int]) -> None:
        """Note that these checkpoints' changes were restored (so `/undo` passes over them)."""
        with self._locked():
            for number in numbers:
                self._append({"kind": "undone", "number": number})

    def diff_trees(self, old: str, new: str) -> list[FileChange]:
        """The files that differ between two trees of this store. Raises CheckpointError."""
        return _parse_diff(self._git("diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new))

    def entries(self, tree: str, paths: list[str]) -> dict[str, tuple[str, str]]:
        """path -> (mode, blob id) for those of `paths` present in `tree`. Raises CheckpointError."""
        if not paths:
            return {}
        out: dict[str, tuple[str, str]] = {}
        raw = self._git("ls-tree", "-r", "-z", "--full-tree", tree, "--", *paths)
        for item in raw.split(b"\0"):
            if not item:
                continue
            meta, _, name = item.partition(b"\t")
            mode, _kind, oid = meta.decode().split()
            out[os.fsdecode(name)] = (mode, oid)
        return out

    def blob(self, oid: str) -> bytes:
        """The bytes of one stored file. Raises CheckpointError."""
        return self._git("cat-file", "blob", oid)

    # -- internals ----------------------------------------------------------------------

    @contextmanager
    def _locked(self) -> Iterator[str | None]:
        """Hold the store's lock; clear locks a killed run left; start or repair the store."""
        try:
            ensure_state_dir(self.repo)
            self.root.mkdir(exist_ok=True)
            lock = file_lock(self.root / "store")
            lock.acquire()
        except (OSError, StorageError) as exc:
            raise CheckpointError(f"cannot open the checkpoint store {self.root}: {exc}") from exc
        try:
            self.git.reap_orphan()  # a killed ctxagent's git must not finish over ours
            for name in _STALE_LOCKS:  # under our lock no other ctxagent runs git here
                try:
                    os.unlink(self.git.git_dir / name)
                except OSError:
                    pass
            yield self._open()
        finally:
            lock.release()

    def _open(self) -> str | None:
        """Create the repository if missing; set a damaged one aside. Returns a notice or None."""
        notice = None
        self.git.sweep_inits()
        if (self.git.git_dir / "HEAD").is_file() and not self._checked and not self._healthy():
            notice = self._set_aside("it failed a consistency check")
        if not (self.git.git_dir / "HEAD").is_file():
            try:
                self.git.init()
            except (OSError, StorageError) as exc:
                raise CheckpointError(f"cannot create the checkpoint store in {self.root}: {exc}") from exc
        self._checked = True
        return notice

    def _healthy(self) -> bool:
        """The repository is whole and its head ref (when set) names a commit whose tree is present."""
        if not all((self.git.git_dir / name).is_dir() for name in ("objects", "refs")):
            return False
        try:
            head = self._head()
            if head:
                self.git.run("cat-file", "-e", f"{head}^{{tree}}")
            return True
        except ValueError:
            return False
        except GitFailed:
            return False
        except StorageError:
            return True  # git missing or slow: not damage; record() reports it

    def _set_aside(self, why: str) -> str:
        """Rename the store to `checkpoints.damaged-<stamp>` and start a new one."""
        target = self.root.with_name(f"{STORE_DIR}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        n = 1
        while target.exists():
            n += 1
            target = target.with_name(f"{target.name.split('~')[0]}~{n}")
        try:
            self.root.mkdir(exist_ok=True)
            target.mkdir()
            for name in ("git", "log.jsonl"):
                if (self.root / name).exists():
                    os.replace(self.root / name, target / name)
        except OSError as exc:
            raise CheckpointError(f"the checkpoint store {self.root} is damaged ({why}) and cannot be set "
                                  f"aside: {exc.strerror or exc}. Move it away by hand.") from exc
        message = (f"the checkpoint store was damaged ({why}); it was set aside as {target} and a new one "
                   "started: earlier checkpoints are not available to /undo")
        log.warning(message)
        self._notice = message
        return message

    def _take_notice(self) -> str | None:
        notice, self._notice = getattr(self, "_notice", None), None
        return notice

    def _snapshot_retrying(self) -> Snapshot:
        """`_snapshot`; when git reports damage, set the store aside and try once more."""
        try:
            return self._snapshot()
        except GitFailed as exc:
            if _index_damaged(exc.stderr):
                (self.git.git_dir / "index").unlink(missing_ok=True)  # a cache: rebuilt by the next add
                return self._snapshot_or_raise()
            damaged = any(word in exc.stderr.lower() for word in _DAMAGE) or not self._healthy()
            if not damaged:  # a write failure (disk full, permissions): refuse, keep the store
                raise CheckpointError(f"cannot record a checkpoint: {exc}") from exc
            self._set_aside(exc.stderr.strip().splitlines()[0][:200] if exc.stderr.strip() else "git failed")
            try:
                self.git.init()
            except (OSError, StorageError) as again:
                raise CheckpointError(f"cannot create the checkpoint store in {self.root}: {again}") from again
            return self._snapshot_or_raise()
        except OSError as exc:
            raise CheckpointError(f"cannot record a checkpoint: {exc.strerror or exc}") from exc

    def _snapshot_or_raise(self) -> Snapshot:
        try:
            return self._snapshot()
        except (GitFailed, OSError) as exc:
            raise CheckpointError(f"cannot record a checkpoint: {exc}") from exc

    def _snapshot(self) -> Snapshot:
        """Stage what changed since the last snapshot (stat data decides) and write the tree."""
        first = not (self.git.git_dir / "index").exists()
        found = self.git.run_parallel(("ls-files", "-z", "--others", "--exclude-standard"),
                                      ("diff-files", "-z", "--name-only"))
        others, changed = (raw.split(b"\0") for raw in found)
        tracked_changed = {os.fsdecode(p) for p in changed if p}
        add: list[str] = []
        drop: list[str] = []
        skipped: set[str] = set()
        for raw in [p for p in others if p] + [p for p in changed if p]:
            path = os.fsdecode(raw)
            if path.endswith("/"):
                skipped.add(path)  # a nested git repository: its files belong to it
                continue
            if os.path.basename(path).startswith(TMP_PREFIX):
                continue  # another writer's temporary file (storage.files), gone in a moment
            try:
                info = os.lstat(self.repo / path)
            except FileNotFoundError:
                if path in tracked_changed:  # deleted: `add -A` removes it from the index
                    add.append(path)
                    skipped.discard(path)
                continue  # an untracked file that vanished since the listing
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size > self.max_file_bytes:
                skipped.add(path)
                if path in tracked_changed:
                    drop.append(path)
                continue
            skipped.discard(path)
            add.append(path)
        if drop:
            self.git.run("update-index", "-z", "--force-remove", "--stdin",
                         input=b"".join(os.fsencode(p) + b"\0" for p in drop))
        if add and first:
            import_files(self.git, self.repo, add)  # one pack instead of a loose object a file
        elif add:
            self._add(add, tracked_changed)
        tree = self.git.run("write-tree").decode().strip()
        return Snapshot(tree, tuple(sorted(skipped)))

    def _add(self, paths: list[str], tracked: set[str]) -> None:
        """`git add -A` of `paths`; an untracked file removed meanwhile (a concurrent writer)
        is dropped and the add run once more. Raises GitFailed."""
        for attempt in range(2):
            try:
                self.git.run("add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul",
                             input=b"\0".join(os.fsencode(p) for p in paths))
                return
            except GitFailed as exc:
                if attempt or "did not match any files" not in str(exc):
                    raise
                paths = [p for p in paths if p in tracked or os.path.lexists(self.repo / p)]
                if not paths:
                    return

    def _commit(self, tree: str, message: str) -> str:
        """A commit of `tree` on top of the head ref, and the ref moved to it."""
        try:
            parent = self._head()
            args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
            commit = self.git.run(*args).decode().strip()
            atomic_write_bytes(self.git.git_dir / HEAD_REF, commit.encode() + b"\n")  # what update-ref writes
            return commit
        except (GitFailed, OSError, ValueError) as exc:
            raise CheckpointError(f"cannot record a checkpoint: {exc}") from exc

    def _head(self) -> str | None:
        """The newest snapshot commit (the loose ref file; refs here are never packed).
        Raises ValueError when the ref file does not hold an object id."""
        try:
            text = (self.git.git_dir / HEAD_REF).read_text(encoding="ascii").strip()
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"unreadable {HEAD_REF}: {exc}") from exc
        if len(text) not in (40, 64) or any(c not in "0123456789abcdef" for c in text):
            raise ValueError(f"{HEAD_REF} holds {text[:50]!r}, not an object id")
        return text

    def _next_number(self) -> int:
        """One more than the newest checkpoint, or than the newest a prune removed (numbers
        are never reused: `--restore N` must not name another change later)."""
        done = self.checkpoints()
        return max(done[-1].number if done else 0, self.pruned_through()) + 1

    def _append(self, record: dict) -> None:
        try:
            append_jsonl(self.log_path, record)
        except StorageError as exc:
            raise CheckpointError(str(exc)) from exc

    def _git(self, *args: str) -> bytes:
        try:
            return self.git.run(*args)
        except (GitFailed, OSError) as exc:
            raise CheckpointError(f"the checkpoint store cannot be read: {exc}") from exc

    def _diff(self, cp: Checkpoint, snap: Snapshot) -> list[FileChange]:
        changes = {c.path: c for c in self.diff_trees(cp.tree, snap.tree)}
        for path in set(snap.skipped) & set(changes):  # grew over the limit: still there, not deleted
            changes[path] = FileChange(path, "modified")
        before = set(cp.skipped)
        for path in before & set(changes):  # a large file the change shrank: it was there
            if changes[path].kind == "created":
                changes[path] = FileChange(path, "modified")
        for path in before - set(snap.skipped) - set(changes):  # a large file the change deleted
            if not path.endswith("/"):
                changes[path] = FileChange(path, "deleted")
        for path in set(snap.skipped) - before - set(changes):  # large files the change wrote
            if path.endswith("/"):
                continue
            kind: ChangeKind = "modified" if self.entries(cp.tree, [path]) else "created"
            changes[path] = FileChange(path, kind)
        return sorted(changes.values(), key=lambda c: c.path)


_KINDS: dict[str, ChangeKind] = {"A": "created", "D": "deleted", "M": "modified", "T": "modified"}


def _parse_diff(raw: bytes) -> list[FileChange]:
    parts = raw.split(b"\0")
    out = []
    for status, path in zip(parts[0::2], parts[1::2]):
        kind = _KINDS.get(status.decode()[:1])
        if kind:
            out.append(FileChange(os.fsdecode(path), kind))
    return out


def _index_damaged(stderr: str) -> bool:
    text = stderr.lower()
    return "index" in text and any(w in text for w in ("corrupt", "bad signature", "smaller than expected",
                                                       "unknown index entry", "bad index"))


def remove_store(repo: Path) -> None:
    """Delete `repo`'s checkpoint store (tests, `ctxagent checkpoints --clear`)."""
    shutil.rmtree(state_dir(Path(repo)) / STORE_DIR, ignore_errors=True)
