"""`ctxagent sessions prune [--older-than 30d] [--keep N] [--dry-run]`: remove old sessions.

A session's transcript and snapshots go (`ctxagent.agent.retention`), and its checkpoints
as far as they are the oldest ones; the N newest are kept, and a session used in the last
hour is never removed. Prints one line per session removed, the bytes freed and a line for
the checkpoints. `[state] prune_older_than_days` / `prune_keep` do the same at the start
of every new session (docs/state.md).
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import click

from ctxagent.agent.retention import IN_USE_S, parse_age, prune_session_checkpoints, prune_sessions, stored_sessions
from ctxagent.cli.checkpoints_prune import result_json, summary
from ctxagent.cli.run_cmd import repo_option
from ctxagent.cli.safe_text import safe_json, visible
from ctxagent.errors import StorageError, ToolInputError


@click.command("prune")
@repo_option
@click.option("--older-than", "older_than", default=None, metavar="AGE",
              help="remove sessions last used more than AGE ago (30d, 12h, 2w; a bare number is days)")
@click.option("--keep", type=click.IntRange(0), default=None, metavar="N", help="keep the N newest whatever their age")
@click.option("--dry-run", is_flag=True, help="say what would be removed, remove nothing")
@click.option("--json", "as_json", is_flag=True, help="print the sessions removed as JSON")
def prune_command(repo: Path, older_than: str | None, keep: int | None, dry_run: bool, as_json: bool) -> None:
    """Remove old sessions (transcript, snapshots, their oldest checkpoints) from REPO/.ctxagent."""
    try:
        age = parse_age(older_than) if older_than is not None else None
        removed = prune_sessions(repo, older_than_s=age, keep=keep, dry_run=dry_run, checkpoints=False)
    except ToolInputError as exc:
        raise click.UsageError(str(exc)) from None
    checkpoints, problem = None, None
    try:
        checkpoints = prune_session_checkpoints(repo, removed, dry_run=dry_run) if removed else None
    except StorageError as exc:  # the sessions are gone; their checkpoints stay, restorable
        problem = f"the checkpoints of those sessions were kept: {exc}"
    freed = sum(r.bytes for r in removed)
    if as_json:
        click.echo(safe_json({"dry_run": dry_run, "bytes": freed, "removed": [
            {"id": r.id, "last_used": datetime.fromtimestamp(r.last_used).isoformat(timespec="seconds"),
             "bytes": r.bytes} for r in removed], "checkpoints": checkpoints and result_json(checkpoints),
            "checkpoints_error": problem}))
        return
    verb = "would remove" if dry_run else "removed"
    for row in removed:
        used = datetime.fromtimestamp(row.last_used).strftime("%Y-%m-%d %H:%M")
        click.echo(f"{verb} {visible(row.id)}  last used {used}  {row.bytes / 1e3:,.1f} KB")
    click.echo(f"{verb} {len(removed)} session(s), {freed / 1e6:.2f} MB" if removed else _why_none(repo, keep))
    if checkpoints is not None and checkpoints.removed:
        click.echo(f"checkpoints of those sessions: {summary(checkpoints)}")
    if problem:
        click.echo(f"warning: {problem}", err=True)


def _why_none(repo: Path, keep: int | None) -> str:
    """`nothing to prune` and why: how many sessions there are, and how many of them are kept
    for being used in the last hour (never removed) or among the --keep newest."""
    rows = stored_sessions(repo)
    if not rows:
        return "nothing to prune: no session recorded"
    recent = sum(1 for r in rows if time.time() - r.last_used < IN_USE_S)
    reasons = [f"{recent} used in the last hour (never removed)"] if recent else []
    if keep:
        reasons.append(f"the {min(keep, len(rows))} newest kept (--keep {keep})")
    reasons = reasons or ["none older than --older-than"]
    return f"nothing to prune: {len(rows)} session(s); " + ", ".join(reasons)
