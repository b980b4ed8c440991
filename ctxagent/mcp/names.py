"""Tool names the model sees: `mcp__SERVER__TOOL`, within OpenAI's `^[a-zA-Z0-9_-]{1,64}$`."""

from __future__ import annotations

import fnmatch
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


def covers(pattern: str, name: str) -> bool:
    """Whether a sub-agent's `tools:` entry `pattern` names MCP tool `name`, as Claude Code reads
    it: the name itself, `mcp__SERVER` (every tool of that server) or a shell-style pattern
    (`mcp__SERVER__*`). False for a pattern that is not an MCP name."""
    if not is_mcp_name(pattern):
        return False
    whole_server = "__" not in pattern[len(PREFIX):]
    return name == pattern or (whole_server and name.startswith(pattern + "__")) or fnmatch.fnmatchcase(name, pattern)
