"""`ctxagent doctor`: the resolved settings (keys masked), where each came from, and an endpoint check.

Exit code 0 when the settings load and the endpoint answers; 1 otherwise.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from ctxagent.agent.limits import cost_cap_line
from ctxagent.cli.run_cmd import model_options, repo_option, trust_option
from ctxagent.cli.safe_text import markup
from ctxagent.config.settings import LOCAL_PROVIDER, Settings, load_settings
from ctxagent.config.trust import RepoConfigTrust
from ctxagent.errors import ConfigError
from ctxagent.llm.presets import check_endpoint
from ctxagent.llm.settings import mask


def register(cli: click.Group) -> None:
    """Add `doctor` to the CLI."""
    cli.add_command(doctor_command)


@click.command("doctor")
@repo_option
@model_options
@click.option("--offline", is_flag=True, help="skip the endpoint check")
@trust_option
def doctor_command(repo: Path, model: str | None, base_url: str | None, provider: str | None, offline: bool,
                   trust_repo: bool) -> int:
    """Show the settings ctxagent would use, where each came from, and whether the model endpoint answers."""
    console = Console(highlight=False)
    flags = {"model": model, "base_url": base_url, "provider": provider}
    try:
        settings = load_settings(repo, flags, require_key=False, trust_repo=trust_repo)
    except ConfigError as exc:
        console.print(f"[red]configuration problem:[/] {markup(str(exc))}", soft_wrap=True)
        return 1
    console.print(settings_table(settings))
    console.print(trust_line(settings.repo_trust), soft_wrap=True)
    for name in ("rg", "bwrap"):
        console.print(f"{name}: {'found' if shutil.which(name) else '[yellow]not found[/]'}")
    console.print(exec_line(settings), soft_wrap=True)
    console.print(checkpoint_line(), soft_wrap=True)
    console.print(markup(cost_cap_line(settings.agent, settings.model)), soft_wrap=True)
    if offline:
        return 0
    ok, detail = _check(settings)
    console.print(f"endpoint: {'[green]ok[/]' if ok else '[red]failed[/]'} {markup(detail)}", soft_wrap=True)
    return 0 if ok else 1


def settings_table(settings: Settings) -> Table:
    """Every setting with its value (API key masked) and its source ("default" when not set)."""
    table = Table("setting", "value", "from")
    for section in ("model", "agent", "tools", "exec"):
        values: dict[str, Any] = getattr(settings, section).model_dump()
        for key, value in values.items():
            dotted = f"{section}.{key}"
            shown = mask(settings.model.api_key) if dotted == "model.api_key" else value
            table.add_row(dotted, markup(str(shown)), markup(settings.sources.get(dotted, "default")))
    for key, value in (settings.context.model_extra or {}).items():
        table.add_row(f"context.{key}", markup(str(value)), markup(settings.sources.get(f"context.{key}", "?")))
    table.caption = "config files read: " + (", ".join(settings.files) or "none")
    return table


def exec_line(settings: Settings) -> str:
    """`commands: ...` (rich markup): the permission mode and the sandbox approved commands
    and python_exec get (docs/exec.md); red when they would run unsandboxed."""
    from ctxagent.errors import ToolRefusedError
    from ctxagent.exec.sandbox import choose

    policy = settings.exec_policy()
    try:
        sandbox = choose(policy.sandbox, network=policy.network)
    except ToolRefusedError as exc:
        return f"commands: mode {policy.mode}; [red]{markup(str(exc))}[/]"
    style = "green" if sandbox.kind == "bubblewrap" else "red"
    return f"commands: mode {policy.mode}; sandbox [{style}]{markup(sandbox.describe())}[/]"


def checkpoint_line() -> str:
    """`checkpoints: git X.Y` (rich markup), or red when git is missing or older than 2.25:
    every change (patch, command, code) is refused without a checkpoint (docs/checkpoints.md)."""
    import re
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        return "checkpoints: [red]git not found: patches and commands are refused (install git 2.25 or newer)[/]"
    try:
        out = subprocess.run([git, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"checkpoints: [red]git does not run ({markup(str(exc))})[/]"
    found = re.search(r"(\d+)\.(\d+)", out)
    if found is None or (int(found[1]), int(found[2])) < (2, 25):
        return f"checkpoints: [red]{markup(out.strip())} is older than 2.25: install a newer git[/]"
    return f"checkpoints: git {found[1]}.{found[2]} (a shadow store in .ctxagent/checkpoints)"


def trust_line(trust: RepoConfigTrust) -> str:
    """`repository config: ...` (rich markup): none, trusted (and by what), or the ignored keys (F0)."""
    if trust.path is None:
        return "repository config: none"
    if trust.trusted:
        return f"repository config: {markup(trust.path)} [green]trusted[/] ({markup(trust.trusted_by or '')})"
    if not trust.ignored:
        return f"repository config: {markup(trust.path)} not trusted (none of its settings needs trust)"
    keys = ", ".join(i.key for i in trust.ignored)
    return (f"repository config: {markup(trust.path)} [yellow]not trusted; ignored: {markup(keys)}[/]. "
            f"{markup(trust.how_to_trust)}")


def _check(settings: Settings) -> tuple[bool, str]:
    if settings.model.provider == LOCAL_PROVIDER:
        return True, "offline local model (started on demand; not checked here)"
    return check_endpoint(settings.model)
