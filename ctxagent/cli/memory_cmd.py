"""`ctxagent memory add|search|list|stats|summary|update|rm|forget|consolidate|clear`.

The same actions as the `memory` tool, on `<repo>/.ctxagent/memory.db`; every command
takes `--repo PATH` and `--json`, and draws rich tables for people.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from ctxagent.cli.safe_text import markup
from ctxagent.cli.state_common import common_options, run_tool
from ctxagent.errors import ToolInputError
from ctxagent.memory.model import MEMORY_TYPES
from ctxagent.tools.memory import MemoryTool

_TYPE_STYLE = {"working": "yellow", "episodic": "cyan", "semantic": "green", "perceptual": "magenta"}
_type_choice = click.Choice(MEMORY_TYPES)


def register(cli: click.Group) -> None:
    """Add the `memory` command group to `cli`."""
    cli.add_command(memory_group)


@click.group("memory")
def memory_group() -> None:
    """Long-term memory the agent keeps in .ctxagent/memory.db (SQLite, searchable in any language)."""


def _tool(repo: str) -> MemoryTool:
    return MemoryTool.for_repo(Path(repo))


@memory_group.command("add")
@click.argument("text")
@click.option("--type", "memory_type", type=_type_choice, default="working", show_default=True)
@click.option("--importance", type=click.FloatRange(0, 1), default=0.5, show_default=True)
@click.option("--file", "file_path", help="perceptual memory: the file it is about")
@click.option("--modality", help="perceptual memory: image, audio, text... (default: from --file)")
@common_options
def add_command(text: str, memory_type: str, importance: float, file_path: str | None, modality: str | None,
                repo: str, as_json: bool) -> None:
    """Remember TEXT; prints the new memory's id."""
    args = {"action": "add", "content": text, "memory_type": memory_type, "importance": importance,
            "file_path": file_path, "modality": modality}
    run_tool(_tool(repo), args, as_json, lambda con, memory_id: con.print(f"added {memory_id}"))


@memory_group.command("search")
@click.argument("query")
@click.option("--type", "types", type=_type_choice, multiple=True, help="only this type (repeatable)")
@click.option("--min-importance", type=click.FloatRange(0, 1), default=0.0, show_default=True)
@click.option("--limit", type=click.IntRange(1, 100), default=10, show_default=True)
@common_options
def search_command(query: str, types: tuple[str, ...], min_importance: float, limit: int, repo: str,
                   as_json: bool) -> None:
    """Find memories relevant to QUERY (ranked by relevance, recency and importance)."""
    args = {"action": "search", "query": query, "memory_types": list(types) or None,
            "min_importance": min_importance, "limit": limit}
    run_tool(_tool(repo), args, as_json, _draw_rows)


@memory_group.command("list")
@click.option("--type", "types", type=_type_choice, multiple=True, help="only this type (repeatable)")
@click.option("--limit", type=click.IntRange(1, 100), default=20, show_default=True)
@common_options
def list_command(types: tuple[str, ...], limit: int, repo: str, as_json: bool) -> None:
    """List memories, most important and newest first."""
    args = {"action": "search", "query": "", "memory_types": list(types) or None, "min_importance": 0.0,
            "limit": limit}
    run_tool(_tool(repo), args, as_json, _draw_rows)


@memory_group.command("stats")
@common_options
def stats_command(repo: str, as_json: bool) -> None:
    """Counts per memory type, time span and database size."""
    run_tool(_tool(repo), {"action": "stats"}, as_json, _draw_stats)


@memory_group.command("summary")
@click.option("--limit", type=click.IntRange(1, 100), default=5, show_default=True)
@common_options
def summary_command(limit: int, repo: str, as_json: bool) -> None:
    """Counts, the most important memories and the newest ones."""
    run_tool(_tool(repo), {"action": "summary", "limit": limit}, as_json, _draw_summary)


@memory_group.command("update")
@click.argument("memory_id")
@click.option("--text", "content", help="new content")
@click.option("--type", "memory_type", type=_type_choice)
@click.option("--importance", type=click.FloatRange(0, 1))
@common_options
def update_command(memory_id: str, content: str | None, memory_type: str | None, importance: float | None,
                   repo: str, as_json: bool) -> None:
    """Change a memory's text, type or importance (MEMORY_ID may be a unique prefix)."""
    args = {"action": "update", "memory_id": memory_id, "content": content, "memory_type": memory_type,
            "importance": importance}
    run_tool(_tool(repo), args, as_json, lambda con, row: _draw_rows(con, [row]))


@memory_group.command("rm")
@click.argument("memory_id")
@common_options
def rm_command(memory_id: str, repo: str, as_json: bool) -> None:
    """Delete one memory (MEMORY_ID may be a unique prefix)."""
    run_tool(_tool(repo), {"action": "remove", "memory_id": memory_id}, as_json,
             lambda con, removed: con.print(f"removed {removed}"))


@memory_group.command("forget")
@click.option("--strategy", type=click.Choice(["importance_based", "time_based", "capacity_based"]),
              default="importance_based", show_default=True)
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.1, show_default=True,
              help="importance_based: delete memories less important than this")
@click.option("--max-age-days", type=click.FloatRange(0), default=30.0, show_default=True,
              help="time_based: delete memories older than this")
@click.option("--max-capacity", type=click.IntRange(0), default=10_000, show_default=True,
              help="capacity_based: keep this many (the most important)")
@common_options
def forget_command(strategy: str, threshold: float, max_age_days: float, max_capacity: int, repo: str,
                   as_json: bool) -> None:
    """Delete unimportant, old, or surplus memories."""
    args = {"action": "forget", "strategy": strategy, "threshold": threshold, "max_age_days": max_age_days,
            "max_capacity": max_capacity}
    run_tool(_tool(repo), args, as_json, lambda con, data: con.print(
        f"forgot {data['forgotten']} memories ({data['strategy']}); {data['remaining']} remain"))


@memory_group.command("consolidate")
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.7, show_default=True,
              help="promote memories at least this important")
@click.option("--from", "from_type", type=_type_choice, default="working", show_default=True)
@click.option("--to", "to_type", type=_type_choice, default="episodic", show_default=True)
@common_options
def consolidate_command(threshold: float, from_type: str, to_type: str, repo: str, as_json: bool) -> None:
    """Promote important working memories to episodic ones."""
    args = {"action": "consolidate", "threshold": threshold, "from_type": from_type, "to_type": to_type}
    run_tool(_tool(repo), args, as_json, lambda con, data: con.print(
        f"consolidated {data['consolidated']} memories ({data['from_type']} -> {data['to_type']})"))


@memory_group.command("clear")
@click.option("--yes", "confirm", is_flag=True, help="really delete every memory")
@common_options
def clear_command(confirm: bool, repo: str, as_json: bool) -> None:
    """Delete every memory (needs --yes)."""
    if not confirm:
        raise ToolInputError("memory clear deletes every memory and cannot be undone; run it again with --yes")
    run_tool(_tool(repo), {"action": "clear_all", "confirm": confirm}, as_json,
             lambda con, data: con.print(f"cleared {data['cleared']} memories"))


def _styled(memory_type: str) -> str:
    return f"[{_TYPE_STYLE.get(memory_type, 'white')}]{markup(memory_type)}[/]"


def _draw_rows(con: Console, rows: list[dict[str, Any]]) -> None:
    if not rows:
        con.print("no memories")
        return
    table = Table(show_edge=False, pad_edge=False)
    for name, opts in (("id", {"no_wrap": True}), ("type", {"no_wrap": True}), ("imp.", {"justify": "right"}),
                       ("content", {"overflow": "fold", "ratio": 1}), ("created", {"no_wrap": True})):
        table.add_column(name, **opts)
    if rows[0].get("score") is not None:
        table.add_column("score", justify="right")
    for row in rows:
        cells = [row["id"][:8], _styled(row["memory_type"]), f"{row['importance']:.2f}", markup(row["content"]),
                 row["timestamp"][:16].replace("T", " ")]
        if row.get("score") is not None:
            cells.append(f"{row['score']:.2f}")
        table.add_row(*cells)
    con.print(table)


def _draw_stats(con: Console, data: dict[str, Any]) -> None:
    table = Table(title=f"{data['total_memories']} memories", show_edge=False, pad_edge=False)
    table.add_column("type")
    table.add_column("count", justify="right")
    table.add_column("avg importance", justify="right")
    for kind, info in data["memories_by_type"].items():
        table.add_row(_styled(kind), str(info["count"]), f"{info['avg_importance']:.2f}")
    con.print(table)
    span = f"{(data['oldest'] or '-')[:16]} .. {(data['newest'] or '-')[:16]}"
    con.print(f"[dim]{markup(data['db_path'])} ({data['db_bytes']:,} bytes), search: {data['search_backend']}, "
              f"span {span}[/]")


def _draw_summary(con: Console, data: dict[str, Any]) -> None:
    kinds = ", ".join(f"{_styled(k)} {v['count']}" for k, v in data["memories_by_type"].items())
    con.print(f"[bold]{data['total_memories']} memories[/]  {kinds}")
    con.print("[bold]most important[/]")
    _draw_rows(con, data["important_memories"])
    con.print("[bold]most recent[/]")
    _draw_rows(con, data["recent_memories"])
