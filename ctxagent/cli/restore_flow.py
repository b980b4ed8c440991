"""What `ctxagent undo`, `ctxagent checkpoints --restore`, `/undo` and `/rewind` share:
showing a restore plan, asking before overwriting hand edits, and saying what was done.

Files edited by hand since a change wrote them are listed and never overwritten silently:
on a terminal the user is asked; otherwise the restore is refused unless forced.
"""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Callable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ctxagent.cli.safe_text import plain, visible
from ctxagent.exec.checkpoints import Checkpoint, CheckpointError, CheckpointStore
from ctxagent.exec.restore import RestorePlan, apply_restore, change_files

_SIGN = {"restore": "restore", "remove": "remove "}
_KIND = {"created": "A", "modified": "M", "deleted": "D"}


def describe(cp: Checkpoint) -> str:
    """`checkpoint 3 (turn 2, apply_patch: src/app.py)`, safe to print as rich markup."""
    return escape(visible(f"checkpoint {cp.number} (turn {cp.turn}, {cp.tool}: {cp.label})"))


def show_plan(console: Console, plan: RestorePlan) -> None:
    """One line per file: what happens to it, and `edited by hand` where that is so."""
    for f in plan.files:
        note = "  [yellow](edited by hand since)[/]" if f.edited else ""
        console.print(f"  {_SIGN[f.action]} {escape(visible(f.path))}{note}", highlight=False)
    for path in plan.skipped:
        console.print(f"  [dim]skip    {escape(visible(path))} (not recorded: over the size limit or a nested "
                      "repository)[/]", highlight=False)


def confirm_edited(console: Console, plan: RestorePlan, force: bool,
                   ask: Callable[[str], bool] | None = None) -> bool:
    """True when the restore may go on: no hand edits, `force`, or the user said yes
    (asked only on a terminal; in a pipe it is refused, saying to pass --force)."""
    if not plan.edited or force:
        return True
    names = ", ".join(visible(f.path) for f in plan.edited)
    console.print(f"[yellow]{len(plan.edited)} file(s) were edited by hand after the change: "
                  f"{escape(names)}[/]", highlight=False)
    if ask is None:
        if not sys.stdin.isatty():
            console.print("[red]not restored[/]: stdin is not a terminal, so I cannot ask; pass --force to "
                          "overwrite those edits too. No file was changed.")
            return False
        import click

        ask = lambda q: click.confirm(q, default=False, err=True)  # noqa: E731
    if ask("Overwrite your edits as well?"):
        return True
    console.print("not restored: no file was changed.")
    return False


def run_restore(console: Console, store: CheckpointStore, plan: RestorePlan, *, force: bool, session_id: str,
                turn: int, tool: str, ask: Callable[[str], bool] | None = None) -> bool:
    """Show `plan`, confirm hand edits, write it and say what was done; True when restored."""
    if not plan.files:
        console.print("nothing to restore: the files of those changes are already as they were.")
        store.mark_undone([c.number for c in plan.undone])
        return True
    show_plan(console, plan)
    if not confirm_edited(console, plan, force, ask):
        return False
    try:
        result = apply_restore(store, plan, overwrite_edited=True, session_id=session_id, turn=turn,
                               tool=tool)  # type: ignore[arg-type]
    except CheckpointError as exc:
        console.print(f"[red]error:[/] {escape(visible(str(exc)))}", highlight=False)
        return False
    done = ", ".join(visible(f.path) for f in result.restored)
    console.print(f"restored {len(result.restored)} file(s): {escape(done)}", highlight=False)
    console.print(f"[dim]checkpoint {result.checkpoint.number} holds the files as they were just before: "
                  f"`ctxagent checkpoints --restore {result.checkpoint.number}` brings them back[/]")
    return True


def checkpoint_table(store: CheckpointStore, rows: list[Checkpoint]) -> Table:
    """#, time, session, turn, tool, files (A/M/D), and whether it was undone."""
    everything = store.checkpoints()
    table = Table()
    for name in ("#", "when", "session", "turn", "tool"):
        table.add_column(name, no_wrap=True, justify="right" if name in ("#", "turn") else "left")
    table.add_column("files", overflow="fold")
    table.add_column("state", no_wrap=True)
    for cp in rows:
        changes = change_files(store, cp, everything)
        files = "(not recorded yet)" if changes is None else (
            " ".join(f"{_KIND[c.kind]} {c.path}" for c in changes[:6]) + (f" (+{len(changes) - 6} more)" if len(changes) > 6 else "")
            or "(no file changed)")
        table.add_row(str(cp.number), datetime.fromtimestamp(cp.created).strftime("%m-%d %H:%M:%S"),
                      plain(cp.session_id), str(cp.turn), plain(cp.tool), plain(files), "undone" if cp.undone else "")
    return table
