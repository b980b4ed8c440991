"""Helpers shared by the state commands (`ctxagent notes`, `ctxagent todo`).

Each command calls a tool's `run` (the same actions the model has), then renders:
`--json` prints the returned data as JSON on stdout, otherwise a rich renderer draws
it for people. Storage warnings (a corrupt file set aside, an index rebuilt) are shown
on stderr as `warning: ...`; a CtxAgentError goes up to `ctxagent.cli.main`, which
prints `error: ...` and exits 1.
"""

from __future__ import annotations

import json
import warnings
from typing import Any, Callable

import click
from rich.console import Console
from rich.markup import escape

from ctxagent.tools.base import Tool


def common_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add `--repo PATH` (default ".") and `--json` to a command."""
    func = click.option("--json", "as_json", is_flag=True, help="print the result as JSON")(func)
    return click.option("--repo", type=click.Path(file_okay=False), default=".", show_default=True,
                        help="repository whose .ctxagent/ state to use")(func)


def run_tool(tool: Tool, args: dict[str, Any], as_json: bool, draw: Callable[[Console, Any], None]) -> None:
    """Run `tool` with `args`; print JSON or call `draw(console, data)`.

    Raises the tool's CtxAgentError (after showing any storage warnings).
    """
    err = Console(stderr=True, highlight=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            data = tool.run(args)
        finally:
            _show_warnings(err, caught)
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        draw(Console(highlight=False), data)


def _show_warnings(err: Console, caught: list[warnings.WarningMessage]) -> None:
    for item in caught:
        err.print(f"[yellow]warning:[/] {escape(str(item.message))}", soft_wrap=True)
