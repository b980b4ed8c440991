"""The tools the agent gets: `build_registry(workspace, settings)`.

For now: `terminal` (read-only commands, limits from `Settings.tools`) and `apply_patch`
(the only way files change; needs approval). Other tools are added here by registration,
one `register` line each, never by if/elif on names.
"""

from __future__ import annotations

from pathlib import Path

from ctxagent.config import Settings
from ctxagent.tools.base import ToolRegistry


def build_registry(workspace: Path, settings: Settings, *, session_id: str | None = None) -> ToolRegistry:
    """A fresh ToolRegistry with every agent tool working in `workspace` (a directory).

    `session_id` is for tools that keep per-session state (none of the current ones do).
    """
    from ctxagent.tools.patch import ApplyPatchTool
    from ctxagent.tools.terminal import TerminalTool

    workspace = Path(workspace).resolve()
    limits = settings.tools
    registry = ToolRegistry()
    registry.register(TerminalTool(workspace=workspace, timeout=limits.terminal_timeout_s,
                                   max_output_size=limits.terminal_max_output_bytes))
    registry.register(ApplyPatchTool(workspace=workspace, max_files=limits.patch_max_files,
                                     max_changed_lines=limits.patch_max_changed_lines))
    return registry
