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
- `rag`: the knowledge base in `<repo>/.ctxagent/knowledge/` (docs/memory-rag.md);
  either one stands in as an `UnavailableTool` when its database cannot be opened.

Each tool is one entry of `_makers` (name -> opener), never an if/elif on names;
`[agent] tools` chooses which are offered (the bundled offline model gets only
`terminal` and `apply_patch`: `ctxagent.config.settings.LOCAL_TOOLS`). Every name
matches OpenAI's `^[a-zA-Z0-9_-]{1,64}$` and is unique (`ToolRegistry.register` refuses
a second tool of the same name).
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

from ctxagent.config.settings import Settings
from ctxagent.errors import ConfigError, StorageError
from ctxagent.tools.base import Tool, ToolRegistry
from ctxagent.tools.unavailable import UnavailableTool


def build_registry(workspace: Path, settings: Settings, *, session_id: str | None = None,
                   client: Any = None, only: Sequence[str] | None = None) -> ToolRegistry:
    """A fresh ToolRegistry with the agent tools working in `workspace` (a directory).

    `only`: the names to register (a subset of `ctxagent.config.settings.AGENT_TOOLS`, registered
    in that order; the agent passes `settings.agent.tool_names(provider)`); None: every
    tool. A tool left out is never opened (no database or file is touched for it).
    `session_id`: recorded in the metadata of memories the agent adds. `client`: the
    model client (`LLMClient`) the `plan` tool asks (None, as in `ctxagent tool`: asking
    for a plan is refused with a ConfigError, loading a given plan still works).
    A damaged `<workspace>/.ctxagent/memory.db` or knowledge base is set aside and
    recreated (with a warning); one that cannot be opened at all (a newer schema, an
    unwritable folder) becomes an `UnavailableTool` with a warning, so a run is never
    blocked by it. Raises StorageError when `<workspace>/.ctxagent` itself is refused
    (a symbolic link: `ctxagent.storage.files.ensure_state_dir`), ConfigError for a name in
    `only` that is not a tool.
    """
    workspace = Path(workspace).resolve()
    makers = _makers(workspace, settings, session_id, client)
    unknown = [name for name in only or () if name not in makers]
    if unknown:
        raise ConfigError(f"unknown tool name(s) {', '.join(map(repr, unknown))}; the tools are "
                          f"{', '.join(makers)}", setting="agent.tools")
    registry = ToolRegistry()
    for name, make in makers.items():
        if only is None or name in only:
            registry.register(make())
    return registry


def _makers(workspace: Path, settings: Settings, session_id: str | None,
            client: Any) -> dict[str, Callable[[], Tool]]:
    """Tool name -> a function that opens the tool, in the order the model sees them."""
    from ctxagent.tools.context_fetch import ContextFetchTool
    from ctxagent.tools.memory import MemoryTool
    from ctxagent.tools.notes import NoteTool
    from ctxagent.tools.patch import ApplyPatchTool
    from ctxagent.tools.plan import PlanTool
    from ctxagent.tools.rag import RAGTool
    from ctxagent.tools.terminal import TerminalTool
    from ctxagent.tools.todo import TodoTool

    limits = settings.tools
    todo = functools.cache(lambda: TodoTool.for_repo(workspace))  # one board for `todo` and `plan`
    return {
        "terminal": lambda: TerminalTool(workspace=workspace, timeout=limits.terminal_timeout_s,
                                         max_output_size=limits.terminal_max_output_bytes),
        "apply_patch": lambda: ApplyPatchTool(workspace=workspace, max_files=limits.patch_max_files,
                                              max_changed_lines=limits.patch_max_changed_lines),
        "context_fetch": lambda: ContextFetchTool(workspace=workspace),
        "note": lambda: NoteTool.for_repo(workspace),
        "todo": todo,
        "plan": lambda: PlanTool(client, board=todo()),
        "memory": lambda: _opened(MemoryTool, lambda: MemoryTool.for_repo(workspace, session_id=session_id)),
        "rag": lambda: _opened(RAGTool, lambda: RAGTool.for_repo(workspace)),
    }


def _opened(tool_cls: type[Tool], open_tool: Callable[[], Tool]) -> Tool:
    """`open_tool()`, or, when its database cannot be opened even after recovery, an
    `UnavailableTool` in its place and one UserWarning: the run goes on without it."""
    try:
        return open_tool()
    except StorageError as exc:
        warnings.warn(f"{tool_cls.name} is unavailable in this session: {exc}", stacklevel=3)
        return UnavailableTool(tool_cls, str(exc))
