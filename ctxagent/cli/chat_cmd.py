"""`ctxagent chat`: the interactive session (REPL).

On a terminal: a prompt_toolkit prompt with history in `<repo>/.ctxagent/chat_history`,
Esc+Enter (or a line ending in `\\`) for a new line, Ctrl-C cancels the running turn
(or clears the prompt), Ctrl-D exits (saying the session id and how to resume it); slash commands in `ctxagent.cli.slash`. When
stdin is not a terminal, lines are read from it (one message per line, `\\` continues),
so a chat can be scripted; approvals then read an answer line too.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import click
from rich.console import Console
from rich.markup import escape

from ctxagent.cli.main import write_crash_log
from ctxagent.cli.render import RichRenderer
from ctxagent.cli.run_cmd import exec_options, model_options, protocol_option, stdin_asker, trust_option
from ctxagent.cli.safe_text import markup
from ctxagent.cli.slash import ChatContext, dispatch, is_command
from ctxagent.cli.workspace import find_workspace, repo_option, workspace_of
from ctxagent.cli.wrap import soft
from ctxagent.config.settings import load_settings
from ctxagent.storage.files import ensure_state_dir

if TYPE_CHECKING:
    from ctxagent.agent.loop import Agent

#: Reads one message; raises EOFError at the end, KeyboardInterrupt on Ctrl-C.
ReadLine = Callable[[str], str]


def register(cli: click.Group) -> None:
    """Add `chat` to the CLI."""
    cli.add_command(chat_command)


@click.command("chat")
@repo_option
@click.option("--resume", metavar="ID|last", help="continue a previous session (see `ctxagent sessions`)")
@click.option("--yes", "-y", is_flag=True, help="approve every patch without asking")
@click.option("--fresh", is_flag=True, help="leave earlier sessions' todo items and notes out of the model's view")
@exec_options
@model_options
@protocol_option
@trust_option
def chat_command(repo: Path, resume: str | None, yes: bool, fresh: bool, mode: str | None, allow_exec: bool | None,
                 model: str | None, base_url: str | None, provider: str | None, protocol: str | None,
                 trust_repo: bool) -> int:
    """Talk with the agent about the repository, turn after turn."""
    from ctxagent.agent.runtime import open_agent  # imports the model client: only when chatting

    flags = {"model": model, "base_url": base_url, "provider": provider, "protocol": protocol, "yes": yes,
             "mode": mode, "allow_exec": allow_exec}
    settings = load_settings(repo, flags, trust_repo=trust_repo)
    console = Console(highlight=False)
    renderer = RichRenderer(console, secrets=settings.secrets())
    read, ask = _input_functions(Path(repo), console, settings.secrets())
    with open_agent(repo, settings, resume=resume, sinks=[renderer], ask=ask, fresh=fresh,
                    notice=lambda text: console.print(text, style="yellow", markup=False),
                    cwd=workspace_of().cwd) as agent:
        _banner(agent, console, resumed=bool(resume))
        repl(agent, read, console, renderer)
    return 0


def _banner(agent: "Agent", console: Console, *, resumed: bool) -> None:
    model = agent.settings.model
    what = f"resumed with {len(agent.session.history)} messages" if resumed else "new session"
    protocol = "" if agent.protocol.native else f" · {markup(agent.protocol.name)} protocol"
    console.print(f"[bold]ctxagent[/] · {markup(model.provider)}/{markup(model.model)}{protocol} · session "
                  f"{agent.session.id} ({what}) · /help for commands", soft_wrap=soft(console))


def repl(agent: "Agent", read: ReadLine, console: Console, renderer: RichRenderer) -> None:
    """Read messages and run turns until /exit or end of input. Ctrl-C never ends the session."""
    context = ChatContext(agent=agent, console=console, send=lambda text: run_turn(agent, text, console, renderer))
    while True:
        try:
            text = read_message(read)
        except KeyboardInterrupt:
            continue
        except EOFError:
            console.print()
            _farewell(agent, console)
            return
        if not text.strip():
            continue
        if is_command(text, context):
            if _dispatch(text, context, console, renderer):
                _farewell(agent, console)
                return
            continue
        run_turn(agent, text, console, renderer)


def _farewell(agent: "Agent", console: Console) -> None:
    """The session id and the command that resumes it (with `--repo` when the working
    directory would not find this workspace again)."""
    session = agent.session
    repo = Path(session.repo).resolve()
    where = "" if find_workspace(None).root == repo else f" --repo {shlex.quote(str(repo))}"
    console.print(f"session {session.id} ({session.turns} turn(s)) is saved; resume it with: "
                  f"ctxagent chat --resume {session.id}{markup(where)}", soft_wrap=True, highlight=False)


def _dispatch(text: str, context: ChatContext, console: Console, renderer: RichRenderer) -> bool:
    """Run a slash command; a bug in one is reported like a turn's, and the session goes on."""
    try:
        return dispatch(text, context)
    except KeyboardInterrupt:
        renderer.close()
        console.print("[yellow]interrupted[/]")
    except Exception as exc:  # noqa: BLE001 - a bug must not end the session; the log has the traceback
        _internal_error(exc, console, renderer)
    return False


def run_turn(agent: "Agent", text: str, console: Console, renderer: RichRenderer) -> None:
    """One turn with `text`; Ctrl-C and internal errors are reported, never raised."""
    try:
        agent.run_turn(text)
    except KeyboardInterrupt:  # landed outside the loop's own handling (e.g. while rendering)
        renderer.close()
        console.print("[yellow]interrupted[/]")
    except Exception as exc:  # noqa: BLE001 - a bug must not end the session; the log has the traceback
        _internal_error(exc, console, renderer)


def _internal_error(exc: Exception, console: Console, renderer: RichRenderer) -> None:
    renderer.close()
    log = write_crash_log(exc)
    console.print(f"[red]internal error:[/] {escape(type(exc).__name__)}: {markup(str(exc))} "
                  f"(details in {log}); the session goes on", soft_wrap=soft(console))


def read_message(read: ReadLine) -> str:
    """One message: lines ending in a backslash continue on the next line."""
    lines = [read("› ")]
    while lines[-1].endswith("\\"):
        lines[-1] = lines[-1][:-1]
        lines.append(read("… "))
    return "\n".join(lines)


def _input_functions(repo: Path, console: Console,
                     secrets: list[str]) -> tuple[ReadLine, Callable[[str], str | None]]:
    if not sys.stdin.isatty():
        return _stdin_line, stdin_asker(console)
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    @bindings.add("escape", "c-j")  # the same keys typed ahead, while the terminal was still in cooked mode
    def _newline(event) -> None:  # type: ignore[no-untyped-def]
        event.current_buffer.insert_text("\n")

    from ctxagent.cli.completion import ChatCompleter, slash_choices

    history = _redacted_history(ensure_state_dir(repo) / "chat_history", secrets)
    completer = ChatCompleter(str(repo), lambda: slash_choices(repo))
    session: PromptSession = PromptSession(history=history, key_bindings=bindings, completer=completer,
                                           complete_while_typing=True)
    answers: PromptSession = PromptSession()

    def ask(question: str) -> str | None:
        try:
            return answers.prompt(question)
        except EOFError:
            return None

    return (lambda prompt: session.prompt(prompt)), ask


def _redacted_history(path: Path, secrets: list[str]) -> Any:
    """prompt_toolkit's FileHistory at `path`, writing each entry with `secrets` (and
    key-shaped strings) redacted: what you type never puts a key in `.ctxagent/`."""
    from prompt_toolkit.history import FileHistory

    from ctxagent.redaction import redact

    class RedactedHistory(FileHistory):
        def store_string(self, string: str) -> None:
            super().store_string(redact(string, secrets))

    return RedactedHistory(str(path))


def _stdin_line(prompt: str) -> str:
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")
