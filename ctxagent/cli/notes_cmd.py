"""`ctxagent notes list|show|search|add|edit|rm|summary`: the agent's notes, for people.

The same actions as the `note` tool, on `<repo>/.ctxagent/notes`; every command takes
`--repo PATH` and `--json`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from ctxagent.cli.safe_text import markup, visible
from ctxagent.cli.state_common import common_options, run_tool
from ctxagent.notes.model import NOTE_TYPES
from ctxagent.tools.notes import NoteTool

_TYPE_STYLE = {"blocker": "bold red", "action": "yellow", "task_state": "cyan",
               "conclusion": "green", "reference": "blue", "decision": "magenta", "general": "white"}


def register(cli: click.Group) -> None:
    """Add the `notes` command group to `cli`."""
    cli.add_command(notes_group)


@click.group("notes")
def notes_group() -> None:
    """Structured notes the agent keeps in .ctxagent/notes (Markdown files you can edit)."""


def _tool(repo: str) -> NoteTool:
    return NoteTool.for_repo(Path(repo))


_type_option = click.option("--type", "note_type", type=click.Choice(NOTE_TYPES), help="only this type")
_tag_option = click.option("--tag", "tags", multiple=True, help="only notes with this tag (repeatable)")


@notes_group.command("list")
@_type_option
@_tag_option
@click.option("--limit", type=click.IntRange(1, 200), default=20, show_default=True)
@common_options
def list_command(note_type: str | None, tags: tuple[str, ...], limit: int, repo: str, as_json: bool) -> None:
    """List notes, most recently updated first."""
    args = {"action": "list", "note_type": note_type, "tags": list(tags) or None, "limit": limit}
    run_tool(_tool(repo), args, as_json, _draw_rows)


@notes_group.command("search")
@click.argument("query")
@_type_option
@_tag_option
@click.option("--limit", type=click.IntRange(1, 200), default=10, show_default=True)
@common_options
def search_command(query: str, note_type: str | None, tags: tuple[str, ...], limit: int,
                   repo: str, as_json: bool) -> None:
    """Search notes by relevance to QUERY (title, tags and body; any language)."""
    args = {"action": "search", "query": query, "note_type": note_type, "tags": list(tags) or None,
            "limit": limit}
    run_tool(_tool(repo), args, as_json, _draw_rows)


@notes_group.command("show")
@click.argument("note_id")
@common_options
def show_command(note_id: str, repo: str, as_json: bool) -> None:
    """Show one note."""
    run_tool(_tool(repo), {"action": "read", "note_id": note_id}, as_json, _draw_note)


@notes_group.command("add")
@click.option("--title", required=True)
@click.option("--type", "note_type", type=click.Choice(NOTE_TYPES), default="general", show_default=True)
@click.option("--tags", default="", help="comma-separated tags")
@click.option("--content", default="", help="Markdown body; '-' reads it from stdin")
@common_options
def add_command(title: str, note_type: str, tags: str, content: str, repo: str, as_json: bool) -> None:
    """Create a note; prints its id."""
    args = {"action": "create", "title": title, "note_type": note_type, "tags": tags or None,
            "content": _body(content)}
    run_tool(_tool(repo), args, as_json, lambda con, note_id: con.print(f"created {note_id}"))


@notes_group.command("edit")
@click.argument("note_id")
@click.option("--title")
@click.option("--type", "note_type", type=click.Choice(NOTE_TYPES))
@click.option("--tags", help="comma-separated tags (replaces the old ones)")
@click.option("--content", help="new Markdown body; '-' reads it from stdin")
@common_options
def edit_command(note_id: str, title: str | None, note_type: str | None, tags: str | None,
                 content: str | None, repo: str, as_json: bool) -> None:
    """Change the title, type, tags or body of a note."""
    args = {"action": "update", "note_id": note_id, "title": title, "note_type": note_type,
            "tags": tags, "content": None if content is None else _body(content)}
    run_tool(_tool(repo), args, as_json, _draw_note)


@notes_group.command("rm")
@click.argument("note_id")
@common_options
def rm_command(note_id: str, repo: str, as_json: bool) -> None:
    """Delete a note (the last version stays as <id>.md.bak)."""
    run_tool(_tool(repo), {"action": "delete", "note_id": note_id}, as_json,
             lambda con, deleted: con.print(f"deleted {deleted}"))


@notes_group.command("summary")
@common_options
def summary_command(repo: str, as_json: bool) -> None:
    """Count notes by type and show the most recent ones."""
    run_tool(_tool(repo), {"action": "summary"}, as_json, _draw_summary)


def _body(content: str) -> str:
    return sys.stdin.read() if content == "-" else content


def _draw_rows(con: Console, rows: list[dict[str, Any]]) -> None:
    if not rows:
        con.print("no notes")
        return
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("id", no_wrap=True)
    table.add_column("type", no_wrap=True)
    table.add_column("title", overflow="fold", ratio=1)
    table.add_column("tags", overflow="fold")
    table.add_column("updated", no_wrap=True)
    if "score" in rows[0]:
        table.add_column("score", justify="right")
    for row in rows:
        cells = [markup(row["note_id"]), _styled_type(row["type"]), markup(row["title"]),
                 markup(", ".join(row["tags"])), markup(row["updated_at"][:16].replace("T", " "))]
        if "score" in row:
            cells.append(f"{row['score']:.2f}")
        table.add_row(*cells)
    con.print(table)


def _draw_note(con: Console, note: dict[str, Any]) -> None:
    meta = note["metadata"]
    con.print(f"[bold]{markup(meta['title'])}[/]  {_styled_type(meta['type'])}  [dim]{markup(meta['id'])}[/]")
    con.print(f"[dim]tags: {markup(', '.join(meta['tags']) or '-')}   "
              f"updated {markup(meta['updated_at'][:19].replace('T', ' '))}[/]")
    con.print()
    con.print(Markdown(visible(note["content"])))


def _draw_summary(con: Console, summary: dict[str, Any]) -> None:
    kinds = ", ".join(f"{_styled_type(k)} {v}" for k, v in summary["type_distribution"].items())
    con.print(f"[bold]{summary['total_notes']} notes[/]  {kinds}")
    _draw_rows(con, [{"tags": [], **r, "note_id": r["id"]} for r in summary["recent_notes"]])


def _styled_type(note_type: str) -> str:
    style = _TYPE_STYLE.get(note_type, "white")
    return f"[{style}]{markup(note_type)}[/]"
