"""The tools the agent gets: `build_registry(workspace, settings, client=...)`.

Every tool is opened one way, `tool_class(name).for_repo(repo, settings, session_id=...,
client=...)`, for each name of `ctxagent.tools.TOOLS` (the one list of tools, in the
order the model sees them) that `[agent] tools` offers. Reference: docs/tools.md.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ctxagent.errors import ConfigError, StorageError
from ctxagent.tools import TOOLS, tool_class
from ctxagent.tools.base import Tool, ToolRegistry
from ctxagent.tools.unavailable import UnavailableTool

if TYPE_CHECKING:  # not imported at run time: `ctxagent tool` opens one tool, without MCP (issue 16)
    from ctxagent.config.settings import Settings
    from ctxagent.mcp.manager import ServerManager

#: Tools whose database may be unopenable (a newer schema, an unwritable folder): they stand
#: in as an `UnavailableTool` instead of stopping the run (breaker F10).
MAY_BE_UNAVAILABLE = frozenset({"memory", "rag"})


def build_registry(workspace: Path, settings: Settings, *, session_id: str | None = None,
                   client: Any = None, only: Sequence[str] | None = None) -> ToolRegistry:
    """A fresh ToolRegistry of the agent tools in `workspace`: `only` names (keys of TOOLS, in TOOLS
    order; None: all; a tool needing another `[agent] mode`, or whose `offered` is False, is left
    out), each opened by `for_repo(..., session_id, client)`; a memory or knowledge base that cannot
    be opened becomes an `UnavailableTool` with a warning. Raises StorageError (`.ctxagent`
    refused), ConfigError (agent.tools: an unknown name). Reference: docs/tools.md."""
    workspace = Path(workspace).resolve()
    check_tool_names(only, settings)
    registry = ToolRegistry()
    for name in TOOLS:
        if (only is None or name in only) and _offered(name, settings):
            tool = open_tool(name, workspace, settings, session_id=session_id, client=client)
            if getattr(tool, "offered", True):  # e.g. `skill` with no skill installed is left out
                registry.register(tool)
    return registry


def _offered(name: str, settings: Settings) -> bool:
    """False for a tool that needs another permission mode (`requires_mode`: python_exec
    is offered in workspace-write mode only)."""
    needed = getattr(tool_class(name), "requires_mode", None)
    return needed is None or needed == settings.agent.mode


def check_tool_names(names: Sequence[str] | None, settings: Settings) -> None:
    """Raise ConfigError (setting agent.tools) naming each of `names` that is not in TOOLS."""
    unknown = [name for name in names or () if name not in TOOLS]
    if unknown:
        source = settings.sources.get("agent.tools")
        where = f" (set in {source})" if source else ""
        raise ConfigError(f"agent.tools{where}: unknown tool name(s) {', '.join(map(repr, unknown))}; "
                          f"the tools are {', '.join(TOOLS)} (or \"all\")", setting="agent.tools")


def open_tool(name: str, workspace: Path, settings: Settings, *, session_id: str | None = None,
              client: Any = None) -> Tool:
    """Tool `name` (a key of TOOLS) for `workspace`; an `UnavailableTool` with one UserWarning
    when its database cannot be opened even after recovery, so a run goes on without it."""
    tool_cls = tool_class(name)
    try:
        return tool_cls.for_repo(workspace, settings, session_id=session_id, client=client)
    except StorageError as exc:
        if name not in MAY_BE_UNAVAILABLE:
            raise
        warnings.warn(f"{tool_cls.name} is unavailable in this session: {exc}", stacklevel=3)
        return UnavailableTool(tool_cls, str(exc))


def open_mcp(repo: Path, settings: Settings, *, ask: Callable[[str], str | None] | None = None) -> ServerManager:
    """The session's MCP servers, started (a repository's once approved: asked through `ask` on a
    terminal only) or listed as not started; notices queued. docs/mcp.md."""
    from ctxagent.mcp.startup import open_servers, session_servers  # asyncio and the SDK: only a session's

    servers, problems = session_servers(repo, settings.mcp_servers, settings.mcp)
    return open_servers(repo, servers, settings.mcp, repo_trusted=settings.repo_trust.trusted, ask=ask,
                        interactive=sys.stdin is not None and sys.stdin.isatty(), secrets=settings.secrets(),
                        problems=problems)
