"""The patch applier: parse -> locate -> apply, all or nothing (docs/patch.md).

`parse_patch`, `seek_sequence`, `plan_patch`, `apply_changes`, `apply_patch_text` (all
three steps) and `unified_diff` (the diff a user approves); one line per module in
`ctxagent/patch/README.md`.
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
