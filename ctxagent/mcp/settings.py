"""The `[mcp]` settings table and one MCP server's definition (`ServerConfig`), as data.

Server definitions come from `[mcp_servers.NAME]` tables (Codex's keys) and `.mcp.json`
(Claude Code's): `ctxagent.mcp.config` reads both into `ServerConfig`. docs/mcp.md.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from ctxagent.validation import Record

#: The top-level table of server definitions in config.toml (`ctxagent.mcp.config`).
SERVERS_KEY = "mcp_servers"
#: Codex's defaults (seconds).
STARTUP_TIMEOUT_S = 10.0
TOOL_TIMEOUT_S = 60.0


class McpSettings(Record):
    """`[mcp]`: whether servers start at all, and which tools run without asking."""

    enabled: bool = True
    """Start the configured MCP servers (false: none starts, `ctxagent mcp list` still lists them)."""
    project_file: bool = True
    """Read the repository's `.mcp.json` (its servers still need your approval once)."""
    allow: Annotated[list[str], Meta(max_length=1000)] = msgspec.field(default_factory=list)
    """Tool names (shell-style patterns, e.g. "mcp__docs__*") called without asking; your own config only."""


class ServerConfig(Record, kw_only=True):
    """One MCP server: how to reach it, its limits and tool filters, and where it was defined.

    `transport`: "stdio" (`command`, `args`, `env`, `cwd`) or "http" (`url`, `headers`,
    `bearer_token_env_var`). `origin`: "user" (your config) or "repo" (the repository's
    files: untrusted until approved). `fingerprint`: hash of the definition as written.
    """

    name: str
    transport: Literal["stdio", "http"]
    command: str = ""
    args: list[str] = msgspec.field(default_factory=list)
    env: dict[str, str] = msgspec.field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    bearer_token_env_var: str | None = None
    startup_timeout_sec: Annotated[float, Meta(gt=0, le=3600)] = STARTUP_TIMEOUT_S
    tool_timeout_sec: Annotated[float, Meta(gt=0, le=86_400)] = TOOL_TIMEOUT_S
    enabled_tools: list[str] | None = None
    disabled_tools: list[str] = msgspec.field(default_factory=list)
    enabled: bool = True
    source: str = ""
    origin: Literal["user", "repo"] = "user"
    fingerprint: str = ""

    def target(self) -> str:
        """What runs or is reached, in one line: the command line or the URL."""
        if self.transport == "http":
            return self.url
        return " ".join([self.command, *self.args])

    def offers(self, tool: str) -> bool:
        """Whether tool `tool` (the server's own name for it) passes `enabled_tools` / `disabled_tools`."""
        if self.enabled_tools is not None and tool not in self.enabled_tools:
            return False
        return tool not in self.disabled_tools
