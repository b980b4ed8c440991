"""Tools the model acts through. Each tool lives in its own module.

Names are imported lazily so that `from ctxagent.tools import TerminalTool` does not
import every tool (and its dependencies) at once.
"""

from __future__ import annotations

import importlib
from typing import Any

from ctxagent.tools.base import Tool, ToolRegistry, ToolResult

_LAZY = {
    "TerminalTool": "ctxagent.tools.terminal",
    "ApplyPatchTool": "ctxagent.tools.patch",
    "NoteTool": "ctxagent.tools.notes",
    "TodoTool": "ctxagent.tools.todo",
    "MemoryTool": "ctxagent.tools.memory",
    "RAGTool": "ctxagent.tools.rag",
    "PlanTool": "ctxagent.tools.plan",
    "ContextFetchTool": "ctxagent.tools.context_fetch",
    "PythonExecTool": "ctxagent.tools.python_exec",
}

__all__ = ["Tool", "ToolRegistry", "ToolResult", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxagent.tools' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
