"""The tools the agent gets: `build_registry(workspace, settings, client=...)`.

- `terminal`: read-only commands (limits from `Settings.tools`);
- `apply_patch`: the only way files change (needs approval); on success it invalidates
  context_fetch's cache for the files it wrote (`ctxagent.fetch.cache.invalidate`);
- `context_fetch`: ranked files, notes, memory and failing tests for a question;
- `note`: durable findings in `<repo>/.ctxagent/notes/`;
- `todo`: the task board in `<repo>/.ctxagent/todos.json`;
- `plan`: a validated 5-12 step plan from the model (through `client`), loadable onto
  the todo board;
- `memory`: long-term memory in `<repo>/.ctxagent/memory.db`;
- `rag`: the knowledge base in `<repo>/.ctxagent/knowledge/` (docs/memory-rag.md).

Each tool is added by one `register` line, never by if/elif on names. Every name
matches OpenAI's `^[a-zA-Z0-9_-]{1,64}$` and is unique (`ToolRegistry.register` refuses
a second tool of the same name).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxagent.config import Settings
from ctxagent.tools.base import ToolRegistry


def build_registry(workspace: Path, settings: Settings, *, session_id: str | None = None,
                   client: Any = None) -> ToolRegistry:
    """A fresh ToolRegistry with every agent tool working in `workspace` (a directory).

    `session_id`: recorded in the metadata of memories the agent adds. `client`: the
    model client (`LLMClient`) the `plan` tool asks (None, as in `ctxagent tool`: asking
    for a plan is refused with a ConfigError, loading a given plan still works).
    Raises StorageError when `<workspace>/.ctxagent/memory.db` or the knowledge base
    cannot be opened (the message says to move the damaged file aside).
    """
    from ctxagent.tools.context_fetch import ContextFetchTool
    from ctxagent.tools.memory import MemoryTool
    from ctxagent.tools.notes import NoteTool
    from ctxagent.tools.patch import ApplyPatchTool
    from ctxagent.tools.plan import PlanTool
    from ctxagent.tools.rag import RAGTool
    from ctxagent.tools.terminal import TerminalTool
    from ctxagent.tools.todo import TodoTool

    workspace = Path(workspace).resolve()
    limits = settings.tools
    registry = ToolRegistry()
    registry.register(TerminalTool(workspace=workspace, timeout=limits.terminal_timeout_s,
                                   max_output_size=limits.terminal_max_output_bytes))
    registry.register(ApplyPatchTool(workspace=workspace, max_files=limits.patch_max_files,
                                     max_changed_lines=limits.patch_max_changed_lines))
    registry.register(ContextFetchTool(workspace=workspace))
    registry.register(NoteTool.for_repo(workspace))
    todo = TodoTool.for_repo(workspace)
    registry.register(todo)
    registry.register(PlanTool(client, board=todo))
    registry.register(MemoryTool.for_repo(workspace, session_id=session_id))
    registry.register(RAGTool.for_repo(workspace))
    return registry
