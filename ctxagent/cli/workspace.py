"""Which folder a command works in (its workspace), and the shared `--repo` option.

`--repo PATH` wins. Without it, the enclosing git root (the nearest folder upwards holding
`.git`) is the workspace, so a command started in `src/` sees the whole repository and one
`.ctxagent/`; the working directory still counts for the AGENTS.md chain and for paths the
user gives. Outside git the working directory is the workspace, with a warning when a
parent folder holds a `.ctxagent/` (say `--repo` to use it). Reference: docs/cli.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import click

from ctxagent.harness.chain import git_root
from ctxagent.storage.files import STATE_DIR_NAME

#: Where `find_workspace`'s result is kept on the click context (`workspace_of`).
META_KEY = "ctxagent.workspace"


@dataclass(frozen=True)
class Workspace:
    """`root`: the workspace (real path); `cwd`: the working directory (real path); `given`:
    `--repo` was passed; `notices`: one-line warnings to show the user (may be empty)."""

    root: Path
    cwd: Path
    given: bool = False
    notices: tuple[str, ...] = ()

    def user_dir(self) -> str | None:
        """The working directory relative to the root (POSIX), or None when it is the root or outside it."""
        try:
            rel = self.cwd.relative_to(self.root).as_posix()
        except ValueError:
            return None
        return None if rel in ("", ".") else rel


def find_workspace(repo: str | os.PathLike[str] | None, cwd: str | os.PathLike[str] | None = None) -> Workspace:
    """The workspace for `--repo` = `repo` (None: not given) started in `cwd` (default the
    process's working directory); see the module doc. Never raises for a missing git."""
    here = Path(os.path.realpath(cwd if cwd is not None else os.getcwd()))
    if repo is not None:
        return Workspace(Path(os.path.realpath(here / repo)), here, given=True)
    top = git_root(here)
    if top is not None:
        notices = ()
        if top != here and (here / STATE_DIR_NAME).is_dir():
            notices = (f"the workspace is the git repository {top}; {here / STATE_DIR_NAME} (left by an older "
                       f"ctxagent run here) is not used: pass --repo . to work in {here} with it",)
        return Workspace(top, here, notices=notices)
    parent = next((p for p in here.parents if (p / STATE_DIR_NAME).is_dir()), None)
    if parent is None:
        return Workspace(here, here)
    return Workspace(here, here, notices=(
        f"{here} is not in a git repository, so it is the workspace; {parent / STATE_DIR_NAME} belongs to "
        f"the parent folder {parent}: pass --repo {parent} to work there with its sessions and notes",))


def _resolve(ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path:
    workspace = find_workspace(value)
    ctx.meta[META_KEY] = workspace
    for notice in workspace.notices:
        click.echo(f"ctxagent: warning: {notice}", err=True)
    return workspace.root


def repo_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--repo PATH`: the workspace (default: the enclosing git repository, else the working
    directory); the command receives the resolved root as a Path."""
    return click.option("--repo", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
                        callback=_resolve, show_default="the enclosing git repository, else .",
                        help="repository (workspace) to work in")(func)


def workspace_of(ctx: click.Context | None = None) -> Workspace:
    """The `Workspace` the running command's `--repo` resolved to (the working directory's,
    found again, when the command has no `--repo`)."""
    ctx = ctx or click.get_current_context(silent=True)
    found = None if ctx is None else ctx.find_root().meta.get(META_KEY) or ctx.meta.get(META_KEY)
    return found if isinstance(found, Workspace) else find_workspace(None)
