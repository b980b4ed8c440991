"""`ctxagent run "TASK"`: run one task to its end, non-interactively.

Exit codes 0 finished, 2 config, 3 limit, 4 model, 130 interrupted; approvals from the
terminal or one stdin line each; `--json` puts only JSON lines on stdout.
Reference: docs/cli.md ("`ctxagent run`", "Module notes").
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import click

from ctxagent.cli.safe_text import visible
from ctxagent.cli.workspace import repo_option, workspace_of
from ctxagent.cli.wrap import soft
from ctxagent.config.settings import load_settings
from ctxagent.redaction import redact

if TYPE_CHECKING:  # rich and the sinks are imported when a task runs: `tool` and `--help` need neither
    from rich.console import Console

#: TurnEnd reason -> exit code (docs/cli.md).
EXIT_BY_REASON = {"finished": 0, "max_steps": 3, "max_tokens": 3, "max_cost": 3, "wall_time": 3,
                  "error": 4, "interrupted": 130, "blocked": 5}


def register(cli: click.Group) -> None:
    """Add `run` to the CLI."""
    cli.add_command(run_command)


def trust_option(func: Callable) -> Callable:
    """`--trust-repo-config`: apply `<repo>/.ctxagent/config.toml` whole (docs/configuration.md)."""
    return click.option("--trust-repo-config", "trust_repo", is_flag=True,
                        help="apply every setting of the repository's .ctxagent/config.toml, endpoint, key "
                             "and approval ones too (only for repositories you trust)")(func)


def protocol_option(func: Callable) -> Callable:
    """`--protocol native|xml|react`: how the model acts (docs/protocols.md)."""
    return click.option("--protocol", type=click.Choice(["native", "xml", "react"]),
                        help="how the model acts: native tool calls, or one action per text reply (xml, react) "
                             "for models served without tool calling")(func)


def exec_options(func: Callable) -> Callable:
    """--mode and --allow-exec: what the agent may run (docs/exec.md)."""
    func = click.option("--allow-exec", is_flag=True, default=None,
                        help="run commands and python_exec without asking (headless runs; --yes never does)")(func)
    return click.option("--mode", type=click.Choice(["read-only", "workspace-write"]), metavar="MODE",
                        help="read-only (default) or workspace-write (also approved commands and "
                             "python_exec)")(func)


def model_options(func: Callable) -> Callable:
    """--model, --base-url, --provider: override the configured model endpoint."""
    func = click.option("--provider", help="provider preset: openai, deepseek, qwen, ollama, vllm, llamacpp, "
                                           "local, custom")(func)
    func = click.option("--base-url", help="OpenAI-compatible endpoint root, e.g. http://127.0.0.1:8000/v1")(func)
    return click.option("--model", help="model name, e.g. deepseek-chat")(func)


@click.command("run")
@click.argument("task")
@repo_option
@click.option("--json", "as_json", is_flag=True, help="print one JSON object per event on stdout")
@click.option("--yes", "-y", is_flag=True, help="approve every patch without asking")
@click.option("--max-steps", type=int, help="most model calls for this task")
@click.option("--resume", metavar="ID|last", help="continue a previous session")
@click.option("--fresh", is_flag=True, help="leave earlier sessions' todo items and notes out of the model's view")
@exec_options
@model_options
@protocol_option
@trust_option
def run_command(task: str, repo: Path, as_json: bool, yes: bool, max_steps: int | None, resume: str | None, fresh: bool,
                mode: str | None, allow_exec: bool | None, model: str | None, base_url: str | None,
                provider: str | None, protocol: str | None, trust_repo: bool) -> int:
    """Run TASK in the repository until the model answers, then exit."""
    if not task.strip():
        raise click.BadParameter("the task is empty; say what to do, e.g. ctxagent run \"add a --verbose flag\"",
                                 param_hint="TASK")
    from rich.console import Console
    from rich.text import Text

    from ctxagent.agent.runtime import open_agent  # imports the model client: only when running
    from ctxagent.cli.jsonout import JsonLinesSink
    from ctxagent.cli.render import RichRenderer

    flags = {"model": model, "base_url": base_url, "provider": provider, "protocol": protocol, "max_steps": max_steps,
             "yes": yes, "mode": mode, "allow_exec": allow_exec}
    settings = load_settings(repo, flags, trust_repo=trust_repo)
    console = Console(stderr=as_json, highlight=False)
    json_sink = JsonLinesSink(secrets=settings.secrets()) if as_json else None
    renderer = None if as_json else RichRenderer(console, secrets=settings.secrets())
    sinks = [json_sink or renderer]
    with open_agent(repo, settings, resume=resume, sinks=sinks, ask=stdin_asker(console), fresh=fresh,
                    notice=lambda text: click.echo(text, err=True), cwd=workspace_of().cwd) as agent:
        if renderer is not None:  # stderr: not in `ctxagent run ... > out.md`
            header = Console(stderr=True, highlight=False)
            header.print(Text(run_header(agent, resumed=bool(resume)), style="dim"), soft_wrap=soft(header))
        end = agent.run_turn(task)
    code = EXIT_BY_REASON.get(end.reason, 1)
    if json_sink is not None:
        json_sink.write({"type": "result", "exit_code": code, "session_id": agent.session.id, **_summary(end)})
    # the renderer has shown why already; stderr says it again for scripts and logs, not on
    # a terminal that shows both streams (the same line twice)
    if code != 0 and not (renderer is not None and console.is_terminal and sys.stderr.isatty()):
        click.echo(f"ctxagent: {end.reason}: {visible(redact(end.message, settings.secrets()))}", err=True)
    if renderer is not None and code in (3, 130):  # stopped, not failed: the work can go on
        click.echo(go_on_line(agent.session.id), err=True)
    return code


def go_on_line(session_id: str) -> str:
    """How to go on after a run stopped by Ctrl-C or a limit: resume the same session."""
    return (f'go on with: ctxagent run --resume {session_id} "..." (or ctxagent chat --resume {session_id})')


def run_header(agent: Any, *, resumed: bool) -> str:
    """`ctxagent run · provider/model · session ID (new) · read-only, patches asked` (control
    characters of the configured names shown escaped)."""
    model, limits = agent.settings.model, agent.settings.agent
    protocol = "" if agent.protocol.native else f" · {agent.protocol.name} protocol"
    patches = "patches approved (--yes)" if limits.auto_approve else "patches asked"
    commands = ", commands asked" if limits.mode == "workspace-write" and limits.approval == "ask" else \
        ", commands run without asking" if limits.mode == "workspace-write" else ""
    what = "resumed" if resumed else "new"
    return visible(f"ctxagent run · {model.provider}/{model.model}{protocol} · session {agent.session.id} ({what}) · "
                   f"{limits.mode}, {patches}{commands}")


def _summary(end: Any) -> dict[str, Any]:
    return {"reason": end.reason, "answer": end.answer, "message": end.message, "steps": end.steps,
            "tokens": end.tokens, "cost_usd": end.cost_usd}


def stdin_asker(console: Console) -> Callable[[str], str | None]:
    """The approval prompt: interactive on a terminal, else one line of stdin per question (EOF = None)."""

    from rich.text import Text

    def ask(question: str) -> str | None:
        if sys.stdin is None:
            return None
        if sys.stdin.isatty():
            try:
                return console.input(Text(question))  # a Text: `[y]es` is not read as markup (F9)
            except EOFError:
                return None
        click.echo(question, err=True, nl=False)
        line = sys.stdin.readline()
        click.echo(line.strip() if line else "(end of input: no)", err=True)
        return line if line else None

    return ask
