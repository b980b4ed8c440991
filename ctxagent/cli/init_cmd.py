"""`ctxagent init`: write the commented starting profile files (Agent.md, Skill.md,
PythonSkill.md, Memory.md, CustomSkill.md, Spec.md) into `<repo>/.ctxagent/`, or with
`--user` into the user's config folder. An existing file is never overwritten; each file
is listed as written or kept. Reference: docs/harness.md.
"""

from __future__ import annotations

from pathlib import Path

import click

from ctxagent.cli.safe_text import visible
from ctxagent.cli.workspace import repo_option
from ctxagent.config.settings import user_config_path
from ctxagent.harness.init import init_profile
from ctxagent.storage.files import ensure_state_dir


def register(cli: click.Group) -> None:
    """Add `init` to the CLI."""
    cli.add_command(init_command)


@click.command("init")
@repo_option
@click.option("--user", "for_user", is_flag=True, help="write them to your config folder (~/.config/ctxagent) instead")
def init_command(repo: Path, for_user: bool) -> int:
    """Write commented starting profile files (never over an existing one)."""
    folder = user_config_path().parent if for_user else ensure_state_dir(repo.resolve())
    for path, written in init_profile(folder):
        click.echo(f"{'wrote' if written else 'kept '} {visible(str(path))}")
    click.echo("Edit them to shape the agent; text inside <!-- --> is not sent to the model.")
    return 0
