"""Tools the model acts through: one module per tool, its description beside it.

`TOOLS` (name -> "module:Class", in the order the model sees them) is the one list of
tools: the agent (`ctxagent.agent.toolset`), `ctxagent tool` and the lazy names below
all read it, so `from ctxagent.tools import TerminalTool` imports only that tool.
"""

from __future__ import annotations

import importlib
from typing import Any

from ctxagent.tools.base import Tool, ToolParams, ToolRegistry, ToolResult

TOOLS: dict[str, str] = {
    "terminal": "ctxagent.tools.terminal:TerminalTool",
    "apply_patch": "ctxagent.tools.patch:ApplyPatchTool",
    "context_fetch": "ctxagent.tools.context_fetch:ContextFetchTool",
    "note": "ctxagent.tools.notes:NoteTool",
    "todo": "ctxagent.tools.todo:TodoTool",
    "plan": "ctxagent.tools.plan:PlanTool",
    "memory": "ctxagent.tools.memory:MemoryTool",
    "rag": "ctxagent.tools.rag:RAGTool",
    "python_exec": "ctxagent.tools.python_exec:PythonExecTool",
    "skill": "ctxagent.tools.skill:SkillTool",
    "memory_file": "ctxagent.tools.memory_file:MemoryFileTool",
    "delegate": "ctxagent.tools.delegate:DelegateTool",
}

_LAZY = {target.split(":")[1]: target.split(":")[0] for target in TOOLS.values()}

__all__ = ["TOOLS", "Tool", "ToolParams", "ToolRegistry", "ToolResult", "tool_class", *_LAZY]


def tool_class(name: str) -> type[Tool]:
    """The class of tool `name` (a key of TOOLS), imported on first use. Raises KeyError."""
    module, _, cls = TOOLS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxagent.tools' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
