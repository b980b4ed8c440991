"""The patch applier: parse -> locate -> apply, all or nothing (docs/patch.md).

- `parse_patch(text) -> Patch` (parser.py): pure, the `*** Begin Patch` format.
- `seek_sequence(lines, pattern, start, eof) -> list[int]` (seek.py): pure matching.
- `plan_patch(patch, workspace, limits) -> list[FileChange]` (plan.py): validates every
  path and locates every hunk before anything is written.
- `apply_changes(changes, workspace, backup_root) -> ApplyResult` (apply.py): backups,
  atomic writes, rollback on failure.
- `apply_patch_text(text, workspace, *, max_files, max_changed_lines)`: all three.
- `unified_diff(changes) -> str` (diff.py): the plain diff a user approves.
"""

from ctxagent.patch.apply import ApplyResult, apply_changes, apply_patch_text
from ctxagent.patch.diff import unified_diff
from ctxagent.patch.model import AddFile, Chunk, DeleteFile, Patch, UpdateFile
from ctxagent.patch.parser import parse_patch
from ctxagent.patch.plan import FileChange, PatchLimits, plan_patch
from ctxagent.patch.seek import seek_sequence
from ctxagent.patch.textfile import TextFile, decode_text, encode_text

__all__ = [
    "AddFile", "ApplyResult", "Chunk", "DeleteFile", "FileChange", "Patch", "PatchLimits",
    "TextFile", "UpdateFile", "apply_changes", "apply_patch_text", "decode_text",
    "encode_text", "parse_patch", "plan_patch", "seek_sequence", "unified_diff",
]
