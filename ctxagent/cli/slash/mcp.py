"""`/mcp`: the session's MCP servers, their state and tools (`ctxagent.cli.mcp_cmd.server_lines`)."""

from __future__ import annotations

from typing import Any, Callable

from ctxagent.cli.mcp_cmd import server_lines
from ctxagent.cli.slash.context import ChatContext
from ctxagent.cli.wrap import soft


def _mcp(ctx: ChatContext, arg: str) -> None:
    follower = getattr(ctx.agent, "mcp", None)
    if follower is None:
        ctx.console.print("MCP servers are not part of this session", markup=False)
        return
    follower.flush()  # notices first, and a lost server's tools gone
    for line in server_lines(follower.manager):
        ctx.console.print(line, markup=False, soft_wrap=soft(ctx.console))


def register_slash_commands(register: Callable[..., Any]) -> None:
    """Register /mcp."""
    register("mcp", "the MCP servers of this session: state (running, failed, crashed, not started) and tools", _mcp)
