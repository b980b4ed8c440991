"""`UnavailableTool`: stands in for a tool whose store could not be opened.

When `memory.db` or the knowledge base cannot be opened even after recovery (a database
of a newer ctxagent, an unwritable folder, a refused state folder), the agent still runs
(breaker F10): `build_registry` registers this stand-in under the tool's name, with the
same description and parameters, so the model's tool list does not change. Every call
fails with the reason (`ok=False` from `execute`, StorageError from `run`), which the
context engine reports as an unavailable source on each request.
"""

from __future__ import annotations

from typing import Any

from ctxagent.errors import StorageError
from ctxagent.tools.base import Tool, ToolResult


class UnavailableTool(Tool):
    """A tool named like `tool_cls` whose every call fails with `reason` (a sentence).

    `available` is False, so callers can tell it from the real tool (e.g. the episodic
    memory recorder is not attached to it).
    """

    available = False

    def __init__(self, tool_cls: type[Tool], reason: str) -> None:
        self.name = tool_cls.name  # type: ignore[misc]
        self.description = tool_cls.description  # type: ignore[misc]
        self.Params = tool_cls.Params  # type: ignore[misc]
        self.reason = reason

    def _run(self, params: Any) -> ToolResult:
        raise StorageError(f"{self.name} is unavailable in this session: {self.reason}")
