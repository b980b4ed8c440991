"""`ctxagent doctor`: the resolved settings (keys masked), where each came from, the tools and
folders ctxagent needs, and an endpoint check.

The report is `REPORT_LINES` in order, one function `(settings, workspace) -> rich markup`
each: add a check by adding a function. A configuration problem (no provider, bad TOML...)
is printed first, then as much of the report as the settings allow (all of it when only
the model is missing). Exit code 0 when the settings load and the endpoint answers; 1 otherwise.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Callable

import click
from rich.console import Console, Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ctxagent.agent.limits import cost_cap_line
from ctxagent.cli.run_cmd import model_options, trust_option
from ctxagent.cli.safe_text import markup, visible
from ctxagent.cli.workspace import Workspace, repo_option, workspace_of
from ctxagent.cli.wrap import soft
from ctxagent.config.settings import LOCAL_PROVIDER, Settings, load_settings
from ctxagent.config.trust import RepoConfigTrust
from ctxagent.errors import ConfigError, StorageError
from ctxagent.llm.presets import check_endpoint
from ctxagent.llm.settings import mask

#: The model name `load_settings(require_model=False)` gives when no provider is configured.
NO_MODEL = "(none)"


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
    settings, problem = _settings(repo, flags, trust_repo)
    if problem is not None:
        console.print(f"[red]configuration problem:[/] {markup(problem)}", soft_wrap=soft(console))
    if settings is None:  # the files themselves are wrong: no settings to show
        _print_lines(console, None, workspace_of())
        return 1
    console.print(settings_table(settings, console.width))
    _print_lines(console, settings, workspace_of())
    if settings.model.model == NO_MODEL:
        console.print("endpoint: [red]not checked[/] (no model provider: see the problem above)",
                      soft_wrap=soft(console))
        return 1
    if offline:
        return 0 if problem is None else 1
    ok, detail = _check(settings)
    console.print(f"endpoint: {'[green]ok[/]' if ok else '[red]failed[/]'} {markup(detail)}", soft_wrap=soft(console))
    return 0 if ok and problem is None else 1


def _settings(repo: Path, flags: dict[str, Any], trust_repo: bool) -> tuple[Settings | None, str | None]:
    """(settings, the problem to show first or None). Without a usable provider the settings are
    loaded without a model, so everything else can still be shown."""
    try:
        return load_settings(repo, flags, require_key=False, trust_repo=trust_repo), None
    except ConfigError as exc:
        problem = str(exc)
    try:
        return load_settings(repo, flags, require_key=False, require_model=False, trust_repo=trust_repo), problem
    except ConfigError:
        return None, problem


def _print_lines(console: Console, settings: Settings | None, workspace: Workspace) -> None:
    for line in REPORT_LINES:
        try:
            text = line(settings, workspace)
        except Exception as exc:  # noqa: BLE001 - one failing check must not hide the others
            text = f"{line.__name__}: [red]could not be checked ({markup(type(exc).__name__)}: {markup(str(exc))})[/]"
        if text:
            console.print(text, soft_wrap=soft(console))


def settings_table(settings: Settings, width: int = 200) -> Table | Group:
    """Every setting with its value (API key masked) and its source ("default" when not set);
    below 100 columns (`width`) one line per setting, its source (when not the default) under it."""
    rows = setting_rows(settings)
    caption = "config files read: " + (", ".join(settings.files) or "none")
    if width < 100:
        name_width = max(len(name) for name, _, _ in rows)
        parts: list[Any] = [Text(f"{'setting':<{name_width}} value", style="bold")]
        for name, value, source in rows:
            parts.append(Text(f"{name:<{name_width}} {value}"))
            if source != "default":
                parts.append(Padding(Text(f"from {source}", style="dim"), (0, 0, 0, 4)))
        return Group(*parts, Text(caption))
    table = Table(caption=caption)
    table.add_column("setting", no_wrap=True)  # a name is never cut: it is what the user looks up and sets
    table.add_column("value", overflow="fold")
    table.add_column("from", overflow="fold")
    for name, value, source in rows:
        table.add_row(name, markup(value), markup(source))
    return table


def setting_rows(settings: Settings) -> list[tuple[str, str, str]]:
    """(dotted name, value as shown, source) for every setting; the API key masked."""
    rows = []
    for section in ("model", "agent", "tools", "exec"):
        values: dict[str, Any] = getattr(settings, section).to_dict()
        for key, value in values.items():
            dotted = f"{section}.{key}"
            shown = mask(settings.model.api_key) if dotted == "model.api_key" else value
            rows.append((dotted, visible(str(shown)), visible(settings.sources.get(dotted, "default"))))
    for key, value in settings.context.items():
        rows.append((f"context.{key}", visible(str(value)), visible(settings.sources.get(f"context.{key}", "?"))))
    return rows


def workspace_line(_settings: Settings | None, workspace: Workspace) -> str:
    """`workspace: ROOT (how it was chosen; the folder the user is in)` (rich markup)."""
    how = ("--repo" if workspace.given else "the enclosing git repository" if (workspace.root / ".git").exists()
           else "the working directory (not in a git repository)")
    where = f"; started in {markup(workspace.user_dir() or '')}/" if workspace.user_dir() else ""
    notes = "".join(f"\n  [yellow]{markup(n)}[/]" for n in workspace.notices)
    return f"workspace: {markup(str(workspace.root))} ({how}{where}){notes}"


def state_line(_settings: Settings | None, workspace: Workspace) -> str:
    """`state folder: ROOT/.ctxagent (N sessions)` (rich markup); not created yet; red when refused."""
    from ctxagent.storage.files import NEEDS_WRITABLE, state_dir

    try:
        folder = state_dir(workspace.root)
    except StorageError as exc:
        return f"state folder: [red]{markup(str(exc))}[/]"
    if not folder.exists() and not os.access(folder.parent, os.W_OK):
        return (f"state folder: [red]{markup(str(folder))} cannot be created: {markup(str(folder.parent))} is not "
                f"writable[/] ({markup(NEEDS_WRITABLE)})")
    if not folder.exists():
        return f"state folder: {markup(str(folder))} (not created yet: the first command that keeps state makes it)"
    if not folder.is_dir():
        return f"state folder: [red]{markup(str(folder))} is not a folder: move it away[/]"
    sessions = len(list((folder / "sessions").glob("*.jsonl"))) if (folder / "sessions").is_dir() else 0
    return f"state folder: {markup(str(folder))} ({sessions} session(s); see `ctxagent sessions`)"


def repo_config_line(settings: Settings | None, _workspace: Workspace) -> str:
    """`trust_line` of the loaded settings ("" without settings)."""
    return trust_line(settings.repo_trust) if settings is not None else ""


def ripgrep_line(_settings: Settings | None, _workspace: Workspace) -> str:
    """`rg: PATH`, or yellow when missing: context_fetch then scans files in Python."""
    from ctxagent.shell.programs import find_rg

    rg = find_rg()
    return (f"rg: {markup(rg)}" if rg else "rg: [yellow]not found[/] (context_fetch scans files in Python, "
            "more slowly; `rg` in the terminal is refused)")


def bwrap_line(_settings: Settings | None, _workspace: Workspace) -> str:
    """`bwrap: found` or yellow `not found` (the read-only terminal's extra jail, the commands' sandbox)."""
    return f"bwrap: {'found' if shutil.which('bwrap') else '[yellow]not found[/]'}"


def commands_line(settings: Settings | None, _workspace: Workspace) -> str:
    """`exec_line` of the loaded settings ("" without settings)."""
    return exec_line(settings) if settings is not None else ""


def checkpoints_line(_settings: Settings | None, _workspace: Workspace) -> str:
    """`checkpoint_line()`."""
    return checkpoint_line()


def cost_cap(settings: Settings | None, _workspace: Workspace) -> str:
    """`cost_cap_line` of the loaded settings: whether `agent.max_cost_usd` can act ("" without settings)."""
    return markup(cost_cap_line(settings.agent, settings.model)) if settings is not None else ""


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


#: The report after the settings table, in order; each line `(settings or None, workspace) -> markup`
#: ("" to show nothing). Add a check here.
REPORT_LINES: list[Callable[[Settings | None, Workspace], str]] = [
    workspace_line, state_line, repo_config_line, ripgrep_line, bwrap_line, commands_line, checkpoints_line,
    cost_cap,
]
