"""`ctxagent sessions`: the sessions of a repository, newest first (id, started, turns, task, tokens)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ctxagent.agent.session import list_sessions
from ctxagent.cli.run_cmd import repo_option


def register(cli: click.Group) -> None:
    """Add `sessions` to the CLI."""
    cli.add_command(sessions_command)


@click.command("sessions")
@repo_option
@click.option("--json", "as_json", is_flag=True, help="print a JSON list instead of a table")
@click.option("--limit", type=int, default=20, show_default=True, help="most sessions shown")
def sessions_command(repo: Path, as_json: bool, limit: int) -> int:
    """List the sessions recorded in REPO/.ctxagent/sessions (resume one with `ctxagent chat --resume ID`)."""
    rows = list_sessions(repo)[:limit]
    if as_json:
        click.echo(json.dumps([{"id": r.id, "started": r.started, "turns": r.turns, "task": r.task,
                                "tokens": r.tokens} for r in rows], ensure_ascii=False))
        return 0
    if not rows:
        click.echo(f"no sessions yet in {Path(repo).resolve()}; start one with `ctxagent chat` or `ctxagent run`")
        return 0
    table = Table("id", "started", "turns", "task", "tokens")
    for row in rows:
        table.add_row(row.id, row.started, str(row.turns), row.task[:60], f"{row.tokens:,}")
    Console().print(table)
    return 0
