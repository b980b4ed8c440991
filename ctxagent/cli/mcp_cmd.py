"""`ctxagent mcp list`: the MCP servers of the repository's session, their state and tools.

Servers are started as a session would start them (a repository's only once approved; never
asked here), listed, then stopped. `server_lines` is shared with chat's `/mcp`. docs/mcp.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ctxagent.cli.run_cmd import repo_option, trust_option
from ctxagent.cli.safe_text import visible
from ctxagent.config.settings import load_settings
from ctxagent.mcp.manager import ServerManager


def register(cli: click.Group) -> None:
    """Add the `mcp` command group to `cli`."""
    cli.add_command(mcp_group)


@click.group("mcp")
def mcp_group() -> None:
    """MCP servers: .mcp.json and [mcp_servers] in config.toml (docs/mcp.md)."""


@mcp_group.command("list")
@repo_option
@click.option("--json", "as_json", is_flag=True, help="one JSON object: servers (state, tools) and problems")
@trust_option
def list_command(repo: Path, as_json: bool, trust_repo: bool) -> None:
    """Start the configured MCP servers as a session would, show their state and tools, stop them."""
    from ctxagent.agent.toolset import open_mcp

    settings = load_settings(repo, {}, require_key=False, require_model=False, trust_repo=trust_repo)
    with open_mcp(repo.resolve(), settings) as manager:
        if as_json:
            click.echo(json.dumps(listing(manager), ensure_ascii=False))
            return
        for line in server_lines(manager):
            click.echo(visible(line))
        for problem in manager.problems:
            click.echo(f"warning: {visible(problem)}", err=True)


def listing(manager: ServerManager) -> dict[str, Any]:
    """{"servers": [{name, state, reason, transport, target, origin, source, tools: [{name, tool,
    description}]}], "problems": [...]}."""
    servers = [{"name": name, "state": s.state, "reason": s.reason, "transport": s.config.transport,
                "target": s.config.target(), "origin": s.config.origin, "source": s.config.source,
                "tools": [{"name": t.name, "tool": t.tool, "description": t.description} for t in s.tools]}
               for name, s in manager.servers.items()]
    return {"servers": servers, "problems": list(manager.problems)}


def server_lines(manager: ServerManager) -> list[str]:
    """One line per server (name, state, transport, what runs, where defined, why), then one per tool."""
    if not manager.servers:
        return ["no MCP servers configured (.mcp.json in the repository, or [mcp_servers.NAME] in config.toml; "
                "see docs/mcp.md)"]
    lines = []
    for name, status in manager.servers.items():
        config = status.config
        why = f": {status.reason}" if status.reason else ""
        lines.append(f"{name}  {status.state}  {config.transport}  {config.target()}  "
                     f"({config.origin} config: {config.source}){why}")
        for tool in status.tools:
            lines.append(f"    {tool.name}  {(tool.description.splitlines() or [''])[0][:100]}")
    return lines
