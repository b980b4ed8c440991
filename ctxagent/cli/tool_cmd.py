"""`ctxagent tool NAME 'JSON_ARGS'`: run one agent tool directly, as the model would.

Opened as the agent opens it (`ctxagent.agent.toolset.open_tool`), without approval (you run
it); a tool that only looks creates no `.ctxagent/` (case F5). `--json` prints `{"ok",
"content", "data"}`, the API key redacted and control characters escaped. Exit 0 when the
tool reports ok, 1 when not, 2 for an unknown tool or bad JSON.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from ctxagent.agent.arguments import parse_arguments, redacted_arguments
from ctxagent.agent.toolset import open_tool
from ctxagent.cli.safe_text import safe_json, visible
from ctxagent.cli.workspace import Workspace, repo_option, workspace_of
from ctxagent.config.settings import load_settings
from ctxagent.redaction import redact
from ctxagent.storage.files import state_dir
from ctxagent.tools import TOOLS


def register(cli: click.Group) -> None:
    """Add `tool` to the CLI."""
    cli.add_command(tool_command)


@click.command("tool")
@click.argument("name")
@click.argument("json_args", default="{}", metavar="'JSON_ARGS'")
@repo_option
@click.option("--json", "as_json", is_flag=True, help='print {"ok", "content", "data"} as JSON')
def tool_command(name: str, json_args: str, repo: Path, as_json: bool) -> int:
    """Run tool NAME with JSON_ARGS (a JSON object), e.g. ctxagent tool terminal '{"command": "ls"}'."""
    settings = load_settings(repo, require_key=False, require_model=False, offline_model=False)
    if name not in TOOLS:
        raise click.BadParameter(f"no tool {name!r}; available: {', '.join(TOOLS)}", param_hint="NAME")
    parsed = parse_arguments(json_args)
    if not parsed.ok:
        raise click.BadParameter(f"not a JSON object: {parsed.problem}", param_hint="'JSON_ARGS'")
    state_dir(repo)  # a linked `.ctxagent` is refused (F16); a tool that stores state creates it (F5), looking does not
    tool = open_tool(name, repo.resolve(), settings)
    _start_in_working_directory(tool, workspace_of())
    result = tool.execute(redacted_arguments(tool, parsed.args, settings.secrets()))
    if as_json:
        click.echo(safe_json(redact(result.to_dict(), settings.secrets())))
    else:
        click.echo(visible(redact(result.content, settings.secrets())), err=not result.ok)
    return 0 if result.ok else 1


def _start_in_working_directory(tool: object, workspace: Workspace) -> None:
    """The terminal starts where the user is (a subfolder of the workspace), as their own
    shell would: its `cd`, so the same path rules apply; other tools take root-relative paths."""
    folder = workspace.user_dir()
    if folder is not None and getattr(tool, "name", "") == "terminal":
        tool.execute({"command": "cd " + shlex.quote(folder)})  # type: ignore[attr-defined]
