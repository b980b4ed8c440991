"""The `ctxagent` command: the click group, command registration, and the top-level error handler.

Commands live in `ctxagent/cli/<name>_cmd.py` with `register(cli)`, listed in
`COMMAND_MODULES`. A `CtxAgentError` prints `error: <message>` and exits with
`exit_code_for(exc)`; other exceptions write a crash log (docs/cli.md, "Module notes").
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from pathlib import Path

import click

from ctxagent import __version__
from ctxagent.cli.safe_text import visible
from ctxagent.cli.warn import cli_warnings
from ctxagent.errors import ConfigError, CtxAgentError, LLMError

#: Every command: name -> (its module, the one-line help `ctxagent --help` shows). The group
#: imports a command's module only when that command runs (or its own --help is asked), so
#: `ctxagent --help` and the commands that need no model stay fast (issue 16, "Start-up");
#: tests/cli/test_lazy_commands.py checks this table against the commands themselves.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("ctxagent.cli.run_cmd", "Run TASK in the repository until the model answers, then exit."),
    "chat": ("ctxagent.cli.chat_cmd", "Talk with the agent about the repository, turn after turn."),
    "sessions": ("ctxagent.cli.sessions_cmd", "List the sessions recorded in REPO/.ctxagent/sessions (resume one "
                 "with `ctxagent chat --resume ID`)."),
    "tool": ("ctxagent.cli.tool_cmd", "Run tool NAME with JSON_ARGS (a JSON object), e.g. ctxagent tool terminal "
             "'{\"command\": \"ls\"}'."),
    "doctor": ("ctxagent.cli.doctor_cmd", "Show the settings ctxagent would use, where each came from, and whether "
               "the model endpoint answers."),
    "apply": ("ctxagent.cli.apply_cmd", "Show PATCH_FILE (a '*** Begin Patch' patch, '-' for stdin) as a diff and "
              "apply it."),
    "notes": ("ctxagent.cli.notes_cmd", "Structured notes the agent keeps in .ctxagent/notes (Markdown files you "
              "can edit)."),
    "todo": ("ctxagent.cli.todo_cmd", "The todo board the agent works through (.ctxagent/todos.json)."),
    "context": ("ctxagent.cli.context_cmd", "Build and print the context for QUERY, with its budget and packet "
                "decisions (no model call)."),
    "inspect": ("ctxagent.cli.context_cmd", 'Show what model call N of SESSION ("last" = newest) was sent: layers, '
                "budget, packet decisions."),
    "memory": ("ctxagent.cli.memory_cmd", "Long-term memory the agent keeps in .ctxagent/memory.db (SQLite, "
               "searchable in any language)."),
    "undo": ("ctxagent.cli.checkpoints_cmd", "Restore the files of the last change (patch, command, python_exec): "
             "modified files back, created files removed, deleted files restored."),
    "checkpoints": ("ctxagent.cli.checkpoints_cmd", "List the checkpoints recorded before each change (turn, "
                    "tool, files), restore one, or prune the oldest."),
    "init": ("ctxagent.cli.init_cmd", "Write commented starting profile files (never over an existing one)."),
    "mcp": ("ctxagent.cli.mcp_cmd", "MCP servers: .mcp.json and [mcp_servers] in config.toml (docs/mcp.md)."),
    "batch": ("ctxagent.cli.batch_cmd", "Run every task of TASKS.jsonl, each in its own working copy, into --out."),
}
#: The command modules, in the order `register_commands` imports them.
COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(module for module, _ in COMMANDS.values()))

#: Where a patch journal waits (`ctxagent.storage.journal`: STATE_DIR_NAME / JOURNAL_DIR).
JOURNAL_PATH = Path(".ctxagent", "journal")

#: Exit codes shared by every command (docs/cli.md).
EXIT_OK, EXIT_FAILURE, EXIT_CONFIG, EXIT_LIMIT, EXIT_MODEL, EXIT_INTERRUPTED, EXIT_CRASH = 0, 1, 2, 3, 4, 130, 70


class CtxAgentGroup(click.Group):
    """A click group that loads each command's module on first use (`COMMANDS`) and turns a
    `CtxAgentError` from any command into `error: <message>` on stderr and its exit code (so
    `CliRunner` tests and the console script behave alike)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except CtxAgentError as exc:
            click.echo(f"error: {visible(str(exc))}", err=True)
            raise click.exceptions.Exit(exit_code_for(exc)) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            _load(self, COMMANDS[cmd_name][0])
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands' table from `COMMANDS` (no module imported), as click would print it."""
        names = self.list_commands(ctx)
        rows = [(name, self.commands[name].get_short_help_str(formatter.width) if name in self.commands
                 else COMMANDS[name][1]) for name in names
                if name not in self.commands or not self.commands[name].hidden]
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, click.Command(name, help=text).get_short_help_str(limit)) for name, text in rows])


def _load(group: click.Group, dotted: str) -> None:
    """Import command module `dotted` and call its `register(group)`; a module that fails to
    import becomes a command that explains the failure (one broken command never takes the
    whole CLI down)."""
    try:
        importlib.import_module(dotted).register(group)
    except Exception as exc:  # noqa: BLE001 - reported through the placeholder commands
        names = [name for name, (module, _) in COMMANDS.items() if module == dotted]
        for name in names or [dotted.rsplit(".", 1)[-1].removesuffix("_cmd")]:
            group.add_command(_broken_command(name, exc))


@click.group(cls=CtxAgentGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ctxagent")
def cli() -> None:
    """ctxagent: a terminal coding agent built around context engineering."""


def register_commands(group: click.Group = cli) -> click.Group:
    """Import every module in COMMAND_MODULES and call its `register(group)`; idempotent.
    The CLI itself loads them one at a time (`CtxAgentGroup.get_command`); this is for
    callers that want every command object at once (tests, docs generation)."""
    if getattr(group, "_ctxagent_registered", False):
        return group
    for dotted in COMMAND_MODULES:
        _load(group, dotted)
    group._ctxagent_registered = True  # type: ignore[attr-defined]
    return group


def _broken_command(name: str, exc: Exception) -> click.Command:

    @click.command(name, hidden=True, context_settings={"ignore_unknown_options": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def broken(args: tuple[str, ...]) -> int:
        click.echo(f"error: the {name!r} command could not load ({type(exc).__name__}: {exc})", err=True)
        return EXIT_FAILURE

    return broken


def exit_code_for(exc: BaseException) -> int:
    """Exit code for an error: 2 ConfigError, 4 LLMError, 130 Ctrl-C, 1 any other CtxAgentError."""
    if isinstance(exc, ConfigError):
        return EXIT_CONFIG
    if isinstance(exc, LLMError):
        return EXIT_MODEL
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return EXIT_FAILURE


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the CLI and exit with its code."""
    sys.exit(run_cli(argv))


def run_cli(argv: list[str] | None = None) -> int:
    """Run the CLI on `argv` (default sys.argv[1:]) and return the exit code; never raises."""
    with cli_warnings():
        return _run(argv)


def _finish_a_dead_patch(argv: list[str] | None) -> None:
    """Undo a patch that a killed run left half-written in the repository (`--repo`, else the
    working directory's workspace) before any command reads it (issue 17, S5); says so on stderr."""
    args = list(sys.argv[1:] if argv is None else argv)
    repo = None  # not given: the workspace `--repo` would default to (ctxagent.cli.workspace)
    for i, word in enumerate(args):
        if word == "--repo" and i + 1 < len(args):
            repo = args[i + 1]
        elif word.startswith("--repo="):
            repo = word.split("=", 1)[1]
    from ctxagent.cli.workspace import find_workspace

    try:
        root = find_workspace(repo).root
    except (OSError, CtxAgentError):
        return  # the command itself reports a bad --repo
    if not (Path(root) / JOURNAL_PATH).is_dir():  # the usual case, without importing the journal code
        return
    from ctxagent.storage.journal import recover_pending

    try:
        note = recover_pending(root)
    except (OSError, CtxAgentError) as exc:
        print(f"ctxagent: warning: an unfinished patch journal could not be recovered: {exc}", file=sys.stderr)
        return
    if note:
        print(f"ctxagent: {note}", file=sys.stderr)


def _not_dumpable() -> None:
    """Linux: PR_SET_DUMPABLE 0, so a command the user approved (unsandboxed) cannot read this
    process's /proc/PID/environ (API keys) as the same user; root still can (docs/exec.md).
    Also stops core dumps and ptrace by the same user. Elsewhere nothing happens."""
    if sys.platform != "linux":
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4 (linux/prctl.h)
    except (OSError, AttributeError):
        pass


def _run(argv: list[str] | None) -> int:
    _not_dumpable()
    _finish_a_dead_patch(argv)
    try:
        result = cli.main(args=argv, prog_name="ctxagent", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (click.Abort, KeyboardInterrupt) as exc:
        report = getattr(exc, "report", None)  # a patch cut by Ctrl-C says what is on disk (PatchInterrupted)
        click.echo(f"interrupted: {visible(str(report))}" if report else "interrupted", err=True)
        return EXIT_INTERRUPTED
    except CtxAgentError as exc:
        click.echo(f"error: {visible(str(exc))}", err=True)
        return exit_code_for(exc)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback on screen
        log = write_crash_log(exc)
        click.echo(f"error: ctxagent crashed ({type(exc).__name__}: {_one_line(exc)}). "
                   f"Details in {log}; please report it.", err=True)
        return EXIT_CRASH
    return result if isinstance(result, int) else EXIT_OK


def _one_line(exc: BaseException) -> str:
    text = visible(str(exc)).strip().split("\n")
    return text[0][:200] if text else ""


def crash_dir(env: dict[str, str] | None = None) -> Path:
    """`$XDG_STATE_HOME/ctxagent/crashes`, default `~/.local/state/ctxagent/crashes`."""
    env = dict(os.environ) if env is None else env
    base = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "state")
    return Path(base) / "ctxagent" / "crashes"


def write_crash_log(exc: BaseException) -> Path:
    """Write the traceback of `exc` (API keys from the environment redacted) and return its path."""
    import traceback

    from ctxagent.redaction import redact

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    secrets = [v for k, v in os.environ.items() if k.endswith(("_API_KEY", "_TOKEN")) and v]
    path = crash_dir() / f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"ctxagent {__version__}\nargv: {redact(sys.argv, secrets)}\n\n{redact(text, secrets)}",
                        encoding="utf-8")
    except OSError:
        return Path("(could not write a crash log)")
    return path


if __name__ == "__main__":  # pragma: no cover
    main()
