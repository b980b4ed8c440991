"""Tool names the model sees: `mcp__SERVER__TOOL`, within OpenAI's `^[a-zA-Z0-9_-]{1,64}$`."""

from __future__ import annotations

import hashlib
import re

PREFIX = "mcp__"
MAX_NAME = 64
_BAD = re.compile(r"[^a-zA-Z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`mcp__SERVER__TOOL`, other characters as `_`; a name over 64 characters is cut and ends
    with 8 hex digits of its hash (so two long names stay apart)."""
    name = f"{PREFIX}{_BAD.sub('_', server)}__{_BAD.sub('_', tool)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[:MAX_NAME - 9]}_{digest}"


def is_mcp_name(name: str) -> bool:
    """Whether `name` is an MCP tool's name."""
    return name.startswith(PREFIX)
