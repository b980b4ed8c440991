"""`ctxagent sessions`: the sessions of a repository, newest first (id, started, turns, task, tokens).

The id is what `--resume ID` needs, so it is never cut or wrapped; on a narrow terminal
the task is cut to one line (with …) instead (breaker report F13). Text read from the
transcripts is shown with control characters made visible (`ctxagent.cli.safe_text`).
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ctxagent.agent.session import list_sessions
from ctxagent.cli.safe_text import plain, safe_json, visible
from ctxagent.cli.workspace import repo_option


def register(cli: click.Group) -> None:
    """Add `sessions` (and `sessions prune`) to the CLI."""
    from ctxagent.cli.sessions_prune import prune_command

    sessions_command.add_command(prune_command)
    cli.add_command(sessions_command)


@click.group("sessions", invoke_without_command=True)
@repo_option
@click.option("--json", "as_json", is_flag=True, help="print a JSON list instead of a table")
@click.option("--limit", type=int, default=20, show_default=True, help="most sessions shown")
def sessions_command(repo: Path, as_json: bool, limit: int) -> int:
    """List the sessions recorded in REPO/.ctxagent/sessions (resume one with `ctxagent chat --resume ID`)."""
    if click.get_current_context().invoked_subcommand:  # `sessions prune`
        return 0
    rows = list_sessions(repo)[:limit]
    if as_json:
        click.echo(safe_json([{"id": r.id, "started": r.started, "turns": r.turns, "task": r.task,
                               "tokens": r.tokens} for r in rows]))
        return 0
    if not rows:
        click.echo(f"no sessions yet in {Path(repo).resolve()}; start one with `ctxagent chat` or `ctxagent run`")
        return 0
    Console().print(sessions_table(rows))
    return 0


def sessions_table(rows: list) -> Table:
    """The table of `rows` (SessionSummary): id, started and numbers never cut; the task
    column alone shrinks, each task on one line ending in … when cut."""
    ids = [visible(row.id) for row in rows]
    table = Table()
    table.add_column("id", no_wrap=True, min_width=max(len(i) for i in ids))
    table.add_column("started", no_wrap=True)
    table.add_column("turns", justify="right", no_wrap=True)
    table.add_column("task", overflow="ellipsis")  # wrappable, so rich shrinks it first
    table.add_column("tokens", justify="right", no_wrap=True)
    for row, row_id in zip(rows, ids):
        task = plain(row.task)
        task.no_wrap, task.overflow = True, "ellipsis"
        table.add_row(Text(row_id), plain(row.started), str(row.turns), task, f"{row.tokens:,}")
    return table
