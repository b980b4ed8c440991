"""`ctxagent todo list|add|start|pause|done|rm|clear`: the agent's todo board, for people.

The same actions as the `todo` tool, on `<repo>/.ctxagent/todos.json`; every command
takes `--repo PATH` and `--json`. The board is drawn in colour (the model gets plain text).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from ctxagent.cli.safe_text import markup
from ctxagent.cli.state_common import common_options, run_tool
from ctxagent.todo.board import PRIORITIES, STATUSES, TodoItem
from ctxagent.tools.todo import TodoTool

_STATUS_STYLE = {"pending": ("○", "white"), "in_progress": ("◐", "bold yellow"),
                 "completed": ("●", "green")}
_PRIORITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}


def register(cli: click.Group) -> None:
    """Add the `todo` command group to `cli`."""
    cli.add_command(todo_group)


@click.group("todo")
def todo_group() -> None:
    """The todo board the agent works through (.ctxagent/todos.json)."""


def _run(repo: str, args: dict[str, Any], as_json: bool) -> None:
    tool = TodoTool.for_repo(Path(repo))
    run_tool(tool, args, as_json, lambda con, _data: draw_board(con, tool.board.items()))


@todo_group.command("list")
@click.option("--status", type=click.Choice(STATUSES), help="only items with this status")
@common_options
def list_command(status: str | None, repo: str, as_json: bool) -> None:
    """Show the board."""
    tool = TodoTool.for_repo(Path(repo))
    run_tool(tool, {"action": "list", "status": status}, as_json,
             lambda con, rows: draw_board(con, [TodoItem(**r) for r in rows]))


@todo_group.command("add")
@click.argument("text")
@click.option("--priority", type=click.Choice(PRIORITIES))
@common_options
def add_command(text: str, priority: str | None, repo: str, as_json: bool) -> None:
    """Add TEXT as a pending item."""
    _run(repo, {"action": "add", "content": text, "priority": priority}, as_json)


def _status_command(name: str, status: str, help_text: str) -> None:
    @todo_group.command(name, help=help_text)
    @click.argument("item_id", type=int)
    @common_options
    def command(item_id: int, repo: str, as_json: bool) -> None:
        _run(repo, {"action": "update", "id": item_id, "status": status}, as_json)


_status_command("start", "in_progress", "Mark item ITEM_ID in progress (only one item may be).")
_status_command("pause", "pending", "Set item ITEM_ID back to pending.")
_status_command("done", "completed", "Mark item ITEM_ID completed.")


@todo_group.command("rm")
@click.argument("item_id", type=int)
@common_options
def rm_command(item_id: int, repo: str, as_json: bool) -> None:
    """Remove item ITEM_ID."""
    _run(repo, {"action": "remove", "id": item_id}, as_json)


@todo_group.command("clear")
@click.option("--all", "everything", is_flag=True, help="remove every item, not only the completed ones")
@common_options
def clear_command(everything: bool, repo: str, as_json: bool) -> None:
    """Remove every completed item (--all: every item)."""
    if not everything:
        _run(repo, {"action": "clear_completed"}, as_json)
        return
    removed = TodoTool.for_repo(Path(repo)).board.clear()
    if as_json:
        click.echo(json.dumps([item.to_dict() for item in removed], ensure_ascii=False))
    else:
        click.echo(f"removed {len(removed)} todo item(s); the board is empty")


def draw_board(con: Console, items: list[TodoItem]) -> None:
    """The board as a coloured table: status mark, id, text, priority."""
    if not items:
        con.print("todo board is empty")
        return
    done = sum(1 for i in items if i.status == "completed")
    table = Table(title=f"todo {done}/{len(items)} completed", show_header=False,
                  show_edge=False, box=None, title_justify="left")
    table.add_column(width=1)
    table.add_column(justify="right", style="dim")
    table.add_column(overflow="fold")
    table.add_column()
    for item in items:
        mark, style = _STATUS_STYLE[item.status]
        text = markup(item.content)
        if item.status == "completed":
            text = f"[strike dim]{text}[/]"
        elif item.status == "in_progress":
            text = f"[bold]{text}[/]"
        prio = f"[{_PRIORITY_STYLE[item.priority]}]{item.priority}[/]" if item.priority else ""
        table.add_row(f"[{style}]{mark}[/]", str(item.id), text, prio)
    con.print(table)
