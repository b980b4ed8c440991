"""Plan a patch: validate every path and locate every hunk, in memory, before any write.

Operations are applied in order to an in-memory view of the files they touch, so a
later operation sees the result of an earlier one (Delete then Add of the same path
replaces the file; two Updates of one file apply in turn). The plan is the net change
per file: `FileChange(path, old_bytes, new_bytes, mode, ...)`. Any failure raises
PatchError and nothing has been written (case P05).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from ctxagent.errors import PatchError
from ctxagent.patch import paths
from ctxagent.patch.hint import paths_ending_with
from ctxagent.patch.locate import apply_chunks, count_changes
from ctxagent.patch.model import AddFile, DeleteFile, Operation, Patch, UpdateFile
from ctxagent.patch.textfile import TextFile, decode_text, encode_text, is_binary
from ctxagent.secret_rules import REDACTED

#: Permission bits of a file created by `*** Add File:`.
NEW_FILE_MODE = 0o644


@dataclass(frozen=True)
class PatchLimits:
    """Size limits of one patch (docs/patch.md; config `tools.patch_max_*`)."""

    max_files: int = 20
    """Most files one patch may create, change, delete or move (a move counts 2)."""
    max_changed_lines: int = 2000
    """Most added + removed lines over the whole patch (lines of deleted files not counted)."""


@dataclass(frozen=True)
class FileChange:
    """The net change of one file: `path` (workspace-relative POSIX, symlinks resolved),
    `old_bytes`/`new_bytes` (None: absent before / deleted), `mode`/`old_mode` (permission bits),
    `action` ("add", "update", "delete", "move"; a move's source is a "delete" with `moved_to`),
    `added`/`removed` (line counts; for a move against the source)."""

    path: str
    old_bytes: bytes | None
    new_bytes: bytes | None
    mode: int | None
    old_mode: int | None = None
    action: str = "update"
    added: int = 0
    removed: int = 0
    moved_from: str | None = None
    moved_to: str | None = None


@dataclass
class _Entry:
    data: bytes | None
    mode: int | None


@dataclass
class _View:
    """Files as the patch has left them so far; disk contents read lazily."""

    root: Path
    disk: dict[str, _Entry] = field(default_factory=dict)
    now: dict[str, _Entry] = field(default_factory=dict)
    moves: dict[str, str] = field(default_factory=dict)  # destination -> source

    def get(self, rel: str, real: Path, raw: str) -> _Entry:
        if rel not in self.now:
            self.disk[rel] = _read(real, raw)
            self.now[rel] = _Entry(self.disk[rel].data, self.disk[rel].mode)
        return self.now[rel]


def _read(real: Path, raw: str) -> _Entry:
    if not real.exists():
        return _Entry(None, None)
    if not real.is_file():
        raise PatchError(f"apply_patch: {raw} is not a regular file (a folder or device); nothing was changed.", path=raw)
    try:
        return _Entry(real.read_bytes(), real.stat().st_mode & 0o7777)
    except OSError as exc:
        raise PatchError(f"apply_patch: cannot read {raw}: {exc.strerror or exc}", path=raw) from exc


def plan_patch(patch: Patch, workspace: Path | str, limits: PatchLimits | None = None) -> list[FileChange]:
    """Validate and locate the whole patch against `workspace`; return the net changes.

    Pure with respect to the filesystem (reads only). Raises PatchError naming the file
    and hunk that failed, or the limit that was exceeded; an OSError from the file system
    (a name too long, a permission) also becomes a PatchError naming the file.
    """
    view = _View(paths.workspace_root(workspace))
    for op in patch.ops:
        try:
            _apply_op(view, op)
        except OSError as exc:  # the file system refused a look-up: a clear error, not a crash
            raise PatchError(f"apply_patch: cannot check {op.path}: {exc.strerror or exc}; nothing was "
                             "changed.", path=op.path) from exc
    changes = _changes(view)
    _check_limits(changes, limits or PatchLimits())
    _check_no_redaction_marker(changes, view)
    return changes


def _check_no_redaction_marker(changes: list[FileChange], view: "_View") -> None:
    """Refuse a patch that writes more REDACTED markers into a file than it had.

    The model sees secrets replaced by the marker wherever it reads them from ctxagent's own
    records (a resumed history, notes, memory, rag chunks): a line it re-types from there
    would overwrite the real secret in the file with the marker (redaction review, 2026-11).
    """
    marker = REDACTED.encode()
    for change in changes:
        if change.new_bytes is None:
            continue
        base = view.disk[change.moved_from].data if change.moved_from else change.old_bytes
        if change.new_bytes.count(marker) > (base or b"").count(marker):
            raise PatchError(
                f"apply_patch: {change.path}: the patch writes {REDACTED}, the marker that stands for a secret "
                "ctxagent hid from you; the real value is in the file. Leave the lines holding secrets out of "
                "the patch (change the lines around them), or ask the user to edit them; nothing was changed.",
                path=change.path)


def _apply_op(view: _View, op: Operation) -> None:
    rel, real = paths.resolve(view.root, op.path)
    entry = view.get(rel, real, op.path)
    if isinstance(op, AddFile):
        if entry.data is not None:
            raise PatchError(
                f"apply_patch: Add File {op.path}: the file already exists; use '*** Update File:' "
                "to change it (or '*** Delete File:' first).", path=op.path)
        _refuse_link(view.root, op.path, "Add File", "create a file through it")
        paths.check_parents(view.root, real, op.path)
        data = encode_text(TextFile(op.lines, final_newline=bool(op.lines)), path=op.path)
        view.now[rel] = _Entry(data, NEW_FILE_MODE)
    elif isinstance(op, DeleteFile):
        if entry.data is None:
            raise PatchError(f"apply_patch: Delete File {op.path}: the file does not exist"
                             f"{_meant(view.root, op.path)}.", path=op.path)
        if paths.is_symlink(view.root, op.path):
            raise PatchError(f"apply_patch: Delete File {op.path}: it is a symbolic link; patches delete "
                             "files, not links (the file it points to was left alone).", path=op.path)
        view.now[rel] = _Entry(None, None)
    else:
        _update(view, op, rel, entry)


def _update(view: _View, op: UpdateFile, rel: str, entry: _Entry) -> None:
    if entry.data is None:
        raise PatchError(f"apply_patch: Update File {op.path}: the file does not exist{_meant(view.root, op.path)}; "
                         "to create it use '*** Add File:' and '+' lines.", path=op.path)
    if is_binary(entry.data) and (op.chunks or op.replace_lines is not None):
        raise PatchError(f"apply_patch: Update File {op.path}: the file is binary (contains NUL bytes); "
                         "patches only change text files.", path=op.path)
    new = _new_bytes(entry.data, op)
    if op.move_to is None or posixpath.normpath(op.move_to) == posixpath.normpath(op.path):
        view.now[rel] = _Entry(new, entry.mode)  # `Move to: ./a.py` for `a.py`: a plain update
        return
    if paths.is_symlink(view.root, op.path):
        raise PatchError(f"apply_patch: Update File {op.path} with Move to: it is a symbolic link; patches move "
                         "files, not links (the file it points to was left alone). Move the file it points to, "
                         "or update the link's target without Move to.", path=op.path)
    _refuse_link(view.root, op.move_to, "Move to", "move a file through it")
    dest_rel, dest_real = paths.resolve(view.root, op.move_to)
    if dest_rel == rel or view.get(dest_rel, dest_real, op.move_to).data is not None:
        raise PatchError(f"apply_patch: Move to {op.move_to}: the destination already exists; "
                         "choose a new path or delete it first.", path=op.path)
    paths.check_parents(view.root, dest_real, op.move_to)
    view.now[rel] = _Entry(None, None)
    view.now[dest_rel] = _Entry(new, entry.mode)
    view.moves[dest_rel] = view.moves.pop(rel, rel)


def _refuse_link(root: Path, raw: str, header: str, what: str) -> None:
    """Refuse a name to be created whose file or a folder on the way is a symbolic link (S16)."""
    link = paths.first_symlink(root, raw)
    if link is not None:
        kind = "is" if link == posixpath.normpath(raw) else f"lies under {link}, which is"
        raise PatchError(f"apply_patch: {header} {raw}: it {kind} a symbolic link; patches do not {what}. "
                         "Name the real path instead; nothing was changed.", path=raw)


def _new_bytes(data: bytes, op: UpdateFile) -> bytes:
    old = decode_text(data)
    if op.replace_lines is not None:
        new = TextFile(op.replace_lines, old.encoding, old.newline, True)
    elif op.chunks:
        edit = apply_chunks(old.lines, old.final_newline, op.chunks, op.path)
        new = TextFile(edit.lines, old.encoding, old.newline, edit.final_newline)
    else:
        return data  # a pure rename keeps the bytes exactly
    return encode_text(new, path=op.path)


def _changes(view: _View) -> list[FileChange]:
    sources = {src: dest for dest, src in view.moves.items()}
    out = []
    for rel, now in view.now.items():
        before = view.disk[rel]
        if before.data == now.data and (now.data is None or before.mode == now.mode):
            continue
        moved_from = view.moves.get(rel) if before.data is None and now.data is not None else None
        base = view.disk[moved_from] if moved_from else before
        added, removed = _counts(base.data, now.data)
        out.append(FileChange(
            rel, before.data, now.data, now.mode if now.data is not None else None, before.mode,
            _action(before.data, now.data, moved_from), added, removed, moved_from,
            sources.get(rel) if now.data is None else None,
        ))
    return out


def _action(old: bytes | None, new: bytes | None, moved_from: str | None) -> str:
    if old is None:
        return "move" if moved_from else "add"
    return "delete" if new is None else "update"


def _counts(old: bytes | None, new: bytes | None) -> tuple[int, int]:
    before = decode_text(old).lines if old is not None and not is_binary(old) else []
    after = decode_text(new).lines if new is not None and not is_binary(new) else []
    return count_changes(before, after)


def _check_limits(changes: list[FileChange], limits: PatchLimits) -> None:
    if len(changes) > limits.max_files:
        raise PatchError(
            f"apply_patch: the patch changes {len(changes)} files, more than the limit of "
            f"{limits.max_files}; split it into smaller patches.")
    lines = sum(c.added + c.removed for c in changes if c.new_bytes is not None)
    if lines > limits.max_changed_lines:
        raise PatchError(
            f"apply_patch: the patch changes {lines} lines, more than the limit of "
            f"{limits.max_changed_lines}; split it into smaller patches.")


def _meant(root: Path, path: str) -> str:
    """`` (paths are relative to ROOT: did you mean `a/b.py`?)`` when files end with `path`, else ``."""
    meant = paths_ending_with(root, path)
    if not meant:
        return ""
    return (f" (paths in a patch are relative to the workspace root {root}: did you mean "
            + " or ".join(f"'{m}'" for m in meant) + "?)")
