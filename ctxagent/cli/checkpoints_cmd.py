"""`ctxagent undo` and `ctxagent checkpoints`: put back the files of the last change, list
checkpoints, restore one (code, conversation or both), prune the oldest (`checkpoints_prune`).
See docs/checkpoints.md.

`undo` falls back to the newest `.ctxagent/backups/` folder of an older ctxagent when the
repository has no checkpoint: it lists it, and `--backup` copies its originals back.
Exit code 0 when restored (or nothing to do), 1 when refused or failed.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from ctxagent.cli.checkpoints_prune import run_prune
from ctxagent.cli.restore_flow import checkpoint_table, describe, run_restore, show_plan
from ctxagent.cli.safe_text import markup, safe_json
from ctxagent.cli.workspace import repo_option
from ctxagent.errors import NotFoundError
from ctxagent.exec.checkpoints import CheckpointStore
from ctxagent.exec.legacy import backup_files, backup_folders, restore_backup
from ctxagent.exec.restore import change_files, last_change, plan_restore
from ctxagent.storage.ids import resolve_id

_session = click.option("--session", "session_id", metavar="ID", help="only the checkpoints of this session")
_force = click.option("--force", is_flag=True, help="also overwrite files edited by hand since the change")


def register(cli: click.Group) -> None:
    """Add `undo` and `checkpoints` to the CLI."""
    cli.add_command(undo_command)
    cli.add_command(checkpoints_command)


@click.command("undo")
@repo_option
@_session
@_force
@click.option("--dry-run", is_flag=True, help="say what would be restored, change nothing")
@click.option("--backup", "from_backup", is_flag=True,
              help="no checkpoints: copy the originals of the newest old backups/ folder back")
def undo_command(repo: Path, session_id: str | None, force: bool, dry_run: bool, from_backup: bool) -> None:
    """Restore the files of the last change (patch, command, python_exec): modified files
    back, created files removed, deleted files restored."""
    console = Console(highlight=False)
    store = CheckpointStore.for_repo(repo)
    session_id = session_of(store, session_id)
    cp = last_change(store, session_id)
    if cp is None:
        _legacy(console, Path(repo), session_id, force, dry_run, from_backup)
        return
    plan = plan_restore(store, cp, session_id=session_id)
    console.print(f"undo {describe(cp)}:")
    if dry_run:
        show_plan(console, plan)
        return
    if not run_restore(console, store, plan, force=force, session_id=session_id or cp.session_id, turn=cp.turn,
                       tool="undo"):
        click.get_current_context().exit(1)


def _legacy(console: Console, repo: Path, session_id: str | None, force: bool, dry_run: bool, backup: bool) -> None:
    folders = backup_folders(repo)
    if not folders or session_id:
        console.print("nothing to undo: no change recorded" + (f" for session {markup(session_id)}" if session_id else
                                                               " in this repository") + ".")
        return
    folder, files = folders[0], backup_files(folders[0])
    console.print(f"no checkpoints here; the newest backup of an older ctxagent is {markup(str(folder))} "
                  f"({len(files)} original(s), files the patch created are not known to it):")
    for path in files:
        console.print(f"  restore {markup(path)}")
    if dry_run or not backup:
        console.print("pass --backup to copy these originals back over the working tree.")
        return
    if not force and not (click.get_text_stream("stdin").isatty()
                          and click.confirm("Overwrite these files with the backup?", default=False, err=True)):
        console.print("not restored (pass --force to restore without asking); no file was changed.")
        click.get_current_context().exit(1)
    restore_backup(repo, folder)
    console.print(f"restored {len(files)} file(s) from {markup(str(folder))}")


@click.command("checkpoints")
@repo_option
@_session
@click.option("--limit", type=int, default=20, show_default=True, help="most checkpoints listed (newest)")
@click.option("--json", "as_json", is_flag=True, help="print a JSON list instead of a table")
@click.option("--restore", "number", type=int, metavar="N", help="go back to checkpoint N (before its change)")
@click.option("--what", type=click.Choice(["code", "conversation", "both"]), default="code", show_default=True,
              help="with --restore: the files, the session's conversation (to before that turn), or both")
@_force
@click.option("--prune", is_flag=True, help="remove the oldest checkpoints (with --older-than and/or --keep)")
@click.option("--older-than", "older_than", default=None, metavar="AGE",
              help="with --prune: checkpoints recorded more than AGE ago (30d, 12h, 2w; a bare number is days)")
@click.option("--keep", type=click.IntRange(0), default=None, metavar="N", help="with --prune: keep the N newest")
@click.option("--dry-run", is_flag=True, help="with --prune: say what would be removed, remove nothing")
def checkpoints_command(repo: Path, session_id: str | None, limit: int, as_json: bool, number: int | None,
                        what: str, force: bool, prune: bool, older_than: str | None, keep: int | None,
                        dry_run: bool) -> None:
    """List the checkpoints recorded before each change (turn, tool, files), restore one, or
    prune the oldest."""
    if prune or older_than is not None or keep is not None or dry_run:
        if not prune:
            raise click.UsageError("--older-than, --keep and --dry-run go with --prune")
        if number is not None or session_id is not None:
            raise click.UsageError("--prune removes the repository's oldest checkpoints: it takes no --restore or "
                                   "--session (`ctxagent sessions prune` removes sessions with their checkpoints)")
        run_prune(Path(repo), older_than, keep, dry_run, as_json)
        return
    console = Console(highlight=False)
    store = CheckpointStore.for_repo(repo)
    session_id = session_of(store, session_id)
    rows = store.checkpoints(session_id)
    if number is not None:
        _restore(console, store, Path(repo), rows, number, what, force, session_id)
        return
    rows = rows[-limit:] if limit > 0 else rows
    if as_json:
        everything = store.checkpoints()
        click.echo(safe_json([{"number": c.number, "session_id": c.session_id, "turn": c.turn, "tool": c.tool,
                               "label": c.label, "created": c.created, "undone": c.undone, "skipped": list(c.skipped),
                               "files": _files_json(store, c, everything)} for c in rows]))
        return
    if not rows:
        console.print("no checkpoints yet: one is recorded before every change ctxagent makes.")
        return
    console.print(checkpoint_table(store, rows, console.width))
    console.print("[dim]restore one with:[/]")
    console.print("[dim]  ctxagent checkpoints --restore N[/]", soft_wrap=True)
    console.print("[dim](add --what conversation, or both, to rewind the session's conversation too)[/]")


def session_of(store: CheckpointStore, given: str | None) -> str | None:
    """The session id `--session` names: itself, or the one checkpointed session it is a prefix
    of (NotFoundError naming the candidates when several); None stays None."""
    if given is None:
        return None
    known = {c.session_id for c in store.checkpoints() if c.session_id}
    if given in known or not any(k.startswith(given) for k in known):
        return given  # an exact id, or one with no checkpoints: "nothing to undo" says so
    return resolve_id(given, known, what="session", listing="list them with `ctxagent checkpoints`")


def _files_json(store: CheckpointStore, cp, everything) -> list | None:
    changes = change_files(store, cp, everything)
    return None if changes is None else [{"path": c.path, "kind": c.kind} for c in changes]


def _restore(console: Console, store: CheckpointStore, repo: Path, rows: list, number: int, what: str, force: bool,
             session_id: str | None) -> None:
    target = next((c for c in rows if c.number == number), None)
    if target is None:
        gone = " (old checkpoints were pruned)" if 0 < number <= store.pruned_through() else ""
        raise NotFoundError(f"no checkpoint {number}{gone}" + (f" in session {session_id}" if session_id else "")
                            + "; list them with `ctxagent checkpoints`")
    console.print(f"back to {describe(target)}:")
    if what in ("code", "both"):
        plan = plan_restore(store, target, session_id=session_id)
        if not run_restore(console, store, plan, force=force, session_id=target.session_id, turn=target.turn,
                           tool="rewind"):
            click.get_current_context().exit(1)
    if what in ("conversation", "both"):
        from ctxagent.agent.rewind import rewind_transcript

        dropped = rewind_transcript(repo, target.session_id, target.turn)
        console.print(f"conversation of session {markup(target.session_id)} rewound to before turn {target.turn} "
                      f"({dropped} message(s) dropped); `ctxagent chat --resume {markup(target.session_id)}` goes on "
                      "from there")


