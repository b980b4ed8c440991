"""`apply_patch`: the only way the agent changes files (docs/patch.md).

`preview(args)` plans the `*** Begin Patch` text once and shows its diff; `_run` writes
exactly that plan, after a checkpoint (`ctxagent.exec.guard`), all files or none, and
refuses when a file changed since. Results: docs/patch.md ("Module notes").
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from msgspec import Meta

from ctxagent.exec.checkpoints import CheckpointError
from ctxagent.exec.guard import CheckpointGuard
from ctxagent.patch import apply_changes, parse_patch, plan_patch, unified_diff
from ctxagent.patch.apply import PatchInterrupted
from ctxagent.patch.paths import workspace_root
from ctxagent.patch.plan import FileChange, PatchLimits
from ctxagent.templates import render
from ctxagent.tools.base import Tool, ToolParams, ToolResult, tool_limits


class PatchParams(ToolParams):
    """Arguments of `apply_patch`."""

    patch: Annotated[str, Meta(description="the whole patch, from '*** Begin Patch' to '*** End Patch'")]


class ApplyPatchTool(Tool):
    """Apply patches inside `workspace`, all or nothing.

    max_files: most files one patch may touch; max_changed_lines: most added + removed
    lines (both refuse the patch with a clear error when exceeded). checkpoint: record
    one before writing (`checkpoints`, a CheckpointGuard; the agent keeps its turn current).
    """

    name = "apply_patch"
    description = render("ctxagent.tools", "tool_apply_patch")
    Params = PatchParams
    needs_approval = True

    def __init__(self, workspace: str | Path = ".", max_files: int = 20,
                 max_changed_lines: int = 2000, checkpoint: bool = True, session_id: str | None = None) -> None:
        self.workspace = Path(workspace)
        self.limits = PatchLimits(max_files=max_files, max_changed_lines=max_changed_lines)
        self.checkpoints = CheckpointGuard(self.workspace, session_id=session_id) if checkpoint else None

    @classmethod
    def for_repo(cls, repo: str | Path, settings: Any = None, *, session_id: str | None = None,
                 client: Any = None) -> ApplyPatchTool:
        """Patches inside repository `repo`, limits from `settings.tools`."""
        limits = tool_limits(settings)
        return cls(workspace=repo, max_files=limits.patch_max_files, max_changed_lines=limits.patch_max_changed_lines,
                   session_id=session_id)

    def plan(self, patch: str) -> list[FileChange]:
        """Parse and locate `patch` without writing. Raises PatchError."""
        return plan_patch(parse_patch(patch), self.workspace, self.limits)

    def preview(self, args: dict) -> str:
        """The unified diff (no colour codes) the user approves. Raises PatchError or
        ToolInputError when the patch does not parse, validate or locate."""
        params = self.parse(args)
        changes = self.plan(params.patch)
        self._planned = (params.patch, changes)  # what the user approves is what `_run` writes (issue 10)
        return unified_diff(changes) or "(the patch leaves every file as it is)\n"

    def _run(self, params: PatchParams) -> ToolResult:
        planned, self._planned = getattr(self, "_planned", None), None
        changes = planned[1] if planned and planned[0] == params.patch else self.plan(params.patch)
        root = workspace_root(self.workspace)  # apply_changes refuses a file changed since the plan
        checkpoint = None
        if self.checkpoints is not None and changes:
            try:
                checkpoint = self.checkpoints.before("apply_patch", ", ".join(c.path for c in changes))
            except CheckpointError as exc:
                return ToolResult(False, f"apply_patch refused: {exc}. Nothing was written (a change is never "
                                         "made without a checkpoint to undo it).")
        try:
            result = apply_changes(changes, root, None)
        except PatchInterrupted:  # Ctrl-C: restored, or (during the commit) applied: the cache must not lie
            _invalidate(self.workspace, [c.path for c in changes])
            raise
        if checkpoint is not None:
            self.checkpoints.after(checkpoint)
        files = result.files()
        _invalidate(self.workspace, [f["path"] for f in files] + [f["from"] for f in files if "from" in f])
        content = f"Patch applied ({len(files)} file{'s' if len(files) != 1 else ''}):\n{result.summary()}"
        if checkpoint is not None and checkpoint.notice:
            content += f"\nwarning: {checkpoint.notice}"
        number = checkpoint.number if checkpoint is not None else None
        return ToolResult(True, content, {"files": files, "checkpoint": number})


def _invalidate(workspace: Path, changed: list[str]) -> None:
    """Drop context_fetch's cached text of the `changed` files (it must not serve pre-patch text)."""
    from ctxagent.fetch.cache import invalidate

    invalidate(workspace, changed)
