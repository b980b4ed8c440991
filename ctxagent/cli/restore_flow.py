"""What `ctxagent undo`, `ctxagent checkpoints --restore`, `/undo` and `/rewind` share:
showing a restore plan, asking before overwriting hand edits, and saying what was done.

Files edited by hand since a change wrote them are listed and never overwritten silently:
on a terminal the user is asked; otherwise the restore is refused unless forced.
"""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Any, Callable

from rich.console import Console, Group
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

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
    console.print(f"[dim]checkpoint {result.checkpoint.number} holds the files as they were just before; "
                  "to bring them back:[/]")
    console.print(f"[dim]  ctxagent checkpoints --restore {result.checkpoint.number}[/]", soft_wrap=True)
    return True


#: Below this many columns a checkpoint's files go on the line under its row (never a column
#: wrapped letter by letter); the same threshold as the context report's packets.
NARROW_COLUMNS = 100


def checkpoint_table(store: CheckpointStore, rows: list[Checkpoint], width: int = 200) -> Table | Group:
    """#, time, session, turn, tool, files (A/M/D), and whether it was undone; under
    NARROW_COLUMNS (`width`, the terminal's columns) the files on an indented line under each row."""
    everything = store.checkpoints()
    if width < NARROW_COLUMNS:
        return _narrow_rows(store, rows, everything)
    table = Table()
    for name in _COLUMNS:
        table.add_column(name, no_wrap=True, justify="right" if name in ("#", "turn") else "left")
    table.add_column("files", overflow="fold")
    table.add_column("state", no_wrap=True)
    for cp in rows:
        *cells, state = _cells(cp)
        table.add_row(*cells, plain(_files(store, cp, everything)), state)
    return table


_COLUMNS = ("#", "when", "session", "turn", "tool")


def _narrow_rows(store: CheckpointStore, rows: list[Checkpoint], everything: list[Checkpoint]) -> Group:
    """A header, then per checkpoint one line of short columns and its files under it, one a line."""
    names = (*_COLUMNS, "state")
    cells = [_cells(cp, seconds=False) for cp in rows]  # 58 columns with a session id
    widths = [max([len(name), *(len(row[i]) for row in cells)]) for i, name in enumerate(names)]

    def line(values: tuple[str, ...]) -> str:
        return " ".join(v.rjust(w) if n in ("#", "turn") else v.ljust(w)
                         for n, v, w in zip(names, values, widths)).rstrip()

    parts: list[Any] = [Text(line(names), style="bold")]
    for cp, row in zip(rows, cells):
        parts += [plain(line(row)), *(Padding(plain(f, "dim"), (0, 0, 0, 4)) for f in _files(store, cp, everything, 1))]
    return Group(*parts)


def _cells(cp: Checkpoint, *, seconds: bool = True) -> tuple[str, ...]:
    when = datetime.fromtimestamp(cp.created).strftime("%m-%d %H:%M:%S" if seconds else "%m-%d %H:%M")
    return (str(cp.number), when, visible(cp.session_id),
            str(cp.turn), visible(cp.tool), "undone" if cp.undone else "")


def _files(store: CheckpointStore, cp: Checkpoint, everything: list[Checkpoint], per_line: int = 0) -> list[str] | str:
    """`A a.py M b.py` (the first six, then `(+N more)`); `per_line` 1: a list, one file an item."""
    changes = change_files(store, cp, everything)
    if changes is None:
        items = ["(not recorded yet)"]
    else:
        items = [f"{_KIND[c.kind]} {c.path}" for c in changes[:6]] + ([f"(+{len(changes) - 6} more)"]
                                                                      if len(changes) > 6 else [])
    items = items or ["(no file changed)"]
    return items if per_line else " ".join(items)
