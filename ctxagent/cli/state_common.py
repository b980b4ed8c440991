"""Helpers shared by the state commands (`ctxagent notes`, `ctxagent todo`).

Each command calls a tool's `run`, then prints JSON (`--json`, through `safe_json`) or a
rich drawing (stored text through `ctxagent.cli.safe_text`); warnings are one
`warning: ...` line each (docs/cli.md, "Module notes").
"""

from __future__ import annotations

from typing import Any, Callable

import click
from rich.console import Console

from ctxagent.cli.safe_text import safe_json
from ctxagent.cli.workspace import repo_option
from ctxagent.tools.base import Tool


def common_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add `--repo PATH` (`ctxagent.cli.workspace.repo_option`) and `--json` to a command."""
    func = click.option("--json", "as_json", is_flag=True, help="print the result as JSON")(func)
    return repo_option(func)


def run_tool(tool: Tool, args: dict[str, Any], as_json: bool, draw: Callable[[Console, Any], None]) -> None:
    """Run `tool` with `args`; print JSON or call `draw(console, data)`.

    Raises the tool's CtxAgentError.
    """
    data = tool.run(args)
    if as_json:
        click.echo(safe_json(data, indent=2, default=str))
    else:
        draw(Console(highlight=False), data)
