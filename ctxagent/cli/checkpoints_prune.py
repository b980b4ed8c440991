"""`ctxagent checkpoints --prune [--older-than AGE] [--keep N] [--dry-run] [--json]`: the output.

The work is `ctxagent.agent.retention.prune_checkpoints` (the oldest checkpoints go, never
one of a session used in the last hour; the store is compacted). Prints one line per
checkpoint removed, then the count and the bytes freed; `--json` one object. Also the
checkpoint line `ctxagent sessions prune` prints. Reference: docs/checkpoints.md.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from ctxagent.agent.retention import parse_age, prune_checkpoints
from ctxagent.cli.safe_text import safe_json, visible
from ctxagent.errors import ToolInputError
from ctxagent.exec.checkpoint_prune import PruneResult


def run_prune(repo: Path, older_than: str | None, keep: int | None, dry_run: bool, as_json: bool) -> None:
    """Prune the store of `repo` and print what went. Bad input: click.UsageError."""
    try:
        age = parse_age(older_than) if older_than is not None else None
        result = prune_checkpoints(repo, older_than_s=age, keep=keep, dry_run=dry_run)
    except ToolInputError as exc:
        raise click.UsageError(str(exc)) from None
    if as_json:
        click.echo(safe_json(result_json(result)))
        return
    verb = "would remove" if dry_run else "removed"
    for cp in result.removed:
        when = datetime.fromtimestamp(cp.created).strftime("%Y-%m-%d %H:%M")
        click.echo(f"{verb} checkpoint {cp.number}  {when}  session {visible(cp.session_id)}  "
                   f"{visible(cp.tool)}: {visible(cp.label)}")
    click.echo(summary(result) if result.removed else
               f"nothing to prune: {result.kept} checkpoint(s); {visible(result.stopped or '')}" if result.kept else
               "nothing to prune: no checkpoint recorded")


def summary(result: PruneResult) -> str:
    """One line: how many checkpoints went (or would), how many stay and why, the bytes freed."""
    stays = f" ({visible(result.stopped)}; none after it goes)" if result.stopped else ""
    if result.dry_run:
        freed = "" if result.estimate is None else f"about {result.estimate / 1e6:.2f} MB of "
        return (f"would remove {len(result.removed)} checkpoint(s), keep {result.kept}{stays}; that would free "
                f"{freed or 'part of '}the {result.before / 1e6:.2f} MB the store holds")
    return (f"removed {len(result.removed)} checkpoint(s), kept {result.kept}{stays}; the store went from "
            f"{result.before / 1e6:.2f} MB to {(result.after or 0) / 1e6:.2f} MB ({result.freed / 1e6:.2f} MB freed)")


def result_json(result: PruneResult) -> dict:
    """The JSON form: dry_run, removed (number, session, created, tool, label), kept, bytes."""
    return {"dry_run": result.dry_run, "kept": result.kept, "stopped_at": result.stopped, "bytes_before": result.before, "bytes_after": result.after,
            "bytes_freed": result.freed, "estimated": result.dry_run,
            "removed": [{"number": c.number, "session_id": c.session_id, "created": c.created, "tool": c.tool,
                         "label": c.label} for c in result.removed]}
