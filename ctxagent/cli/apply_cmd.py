"""`ctxagent apply PATCH_FILE [--repo PATH] [--yes]`: apply a patch file by hand.

The same checks, limits and checkpoint as the agent's `apply_patch` tool; shows the
approval preview and asks y/n unless `--yes`. Exit 0 only when every operation was
applied (docs/cli.md, "Module notes").
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from ctxagent.cli.render import approval_preview
from ctxagent.cli.safe_text import markup, visible
from ctxagent.cli.workspace import repo_option
from ctxagent.config.settings import ToolSettings, load_settings
from ctxagent.errors import ConfigError, CtxAgentError
from ctxagent.exec.guard import CheckpointGuard
from ctxagent.patch import apply_changes, parse_patch, plan_patch, unified_diff
from ctxagent.patch.paths import workspace_root
from ctxagent.patch.plan import PatchLimits


def register(cli: click.Group) -> None:
    """Add the `apply` command to `cli`."""
    cli.add_command(apply_command)


@click.command("apply")
@click.argument("patch_file", type=click.Path(dir_okay=False, allow_dash=True))
@repo_option
@click.option("--yes", "-y", is_flag=True, help="apply without asking")
def apply_command(patch_file: str, repo: Path, yes: bool) -> None:
    """Show PATCH_FILE (a '*** Begin Patch' patch, '-' for stdin) as a diff and apply it."""
    err = Console(stderr=True, highlight=False)
    try:
        _apply(patch_file, Path(repo), yes, err)
    except CtxAgentError as exc:
        _fail(err, str(exc))


def _apply(patch_file: str, repo: Path, yes: bool, err: Console) -> None:
    if patch_file == "-" and not yes:
        _fail(err, "reading the patch from stdin leaves no way to ask for approval; pass --yes.")
    text = _read(patch_file)
    changes = plan_patch(parse_patch(text), repo, _limits(repo, err))
    diff = unified_diff(changes)
    if diff:
        Console(highlight=False).print(approval_preview(diff), end="", soft_wrap=True)
    if not yes:
        _confirm(err)
    root = workspace_root(repo)
    guard = CheckpointGuard(root)
    checkpoint = guard.before("apply", f"ctxagent apply {patch_file}") if changes else None  # CheckpointError: refused
    result = apply_changes(changes, root, None)
    if checkpoint is not None:
        guard.after(checkpoint)
    click.echo(visible(result.summary()))
    if checkpoint is not None:
        if checkpoint.notice:
            err.print(f"warning: {markup(checkpoint.notice)}", soft_wrap=True)
        click.echo(f"Checkpoint {checkpoint.number} recorded before it: `ctxagent undo` puts the files back.")


def _read(patch_file: str) -> str:
    try:
        with click.open_file(patch_file, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise CtxAgentError(f"cannot read patch file {patch_file}: {exc.strerror or exc}") from exc
    return data.decode("utf-8", errors="replace")


def _limits(repo: Path, err: Console) -> PatchLimits:
    try:
        tools = load_settings(repo, require_key=False, require_model=False).tools  # no model needed (S15)
    except ConfigError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        err.print(f"warning: default patch limits used: the settings do not load ({markup(first)}; "
                  "`ctxagent doctor` shows it all)", soft_wrap=True)
        tools = ToolSettings()
    return PatchLimits(max_files=tools.patch_max_files, max_changed_lines=tools.patch_max_changed_lines)


def _confirm(err: Console) -> None:
    if not sys.stdin.isatty():
        _fail(err, "stdin is not a terminal, so approval cannot be asked; pass --yes to apply "
                   "without asking.")
    if not click.confirm("Apply this patch?", default=False, err=True):
        _fail(err, "not applied (declined); no file was changed.")


def _fail(err: Console, message: str) -> None:
    """Print `error: <message>` to stderr and exit 1 (click.exceptions.Exit, which both
    `ctxagent.cli.main.run_cli` and a standalone click group turn into the exit code)."""
    err.print(f"[bold red]error:[/] {markup(message)}", markup=True, soft_wrap=True)
    click.get_current_context().exit(1)
