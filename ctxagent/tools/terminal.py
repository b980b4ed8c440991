"""`terminal`: a read-only terminal for exploring the workspace (ls, cat, grep, find, git log...).

`TerminalTool(workspace=".").run({"command": "ls -la"})` (Hello-Agents, chapter 9): parsed
(`shell.parse`), checked (`shell.policy`), run (`shell.process`) in a jail where bwrap
works; `cd` stays inside the workspace. `allow_dangerous: true` goes to the exec approval
path instead (docs/exec.md). See docs/terminal.md.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import tempfile
from pathlib import Path
from typing import Annotated, Any, ClassVar

from msgspec import Meta

from ctxagent.errors import ToolInputError, ToolRefusedError
from ctxagent.exec.executor import Executor
from ctxagent.exec.gate import WRITE_MODE, ExecPolicy, Gate
from ctxagent.shell.jail import jail_available, jail_prefix, outside_system_dirs
from ctxagent.shell.limits import ResourceLimits
from ctxagent.shell.output import escape_controls, strip_line_ends
from ctxagent.shell.parse import Word, parse_pipeline
from ctxagent.shell.paths import PathContext
from ctxagent.shell.pinned import pin_reads
from ctxagent.shell.policy import check_pipeline
from ctxagent.shell.process import RunResult, resolve_program, run_pipeline, safe_env
from ctxagent.tools.base import Tool, ToolParams, ToolResult, tool_limits
from ctxagent.tools.exec_gate import Ask, GatedRuns


class TerminalParams(ToolParams):
    """Arguments of the terminal tool."""

    command: Annotated[str, Meta(description=(
        "One read-only command, or a `|` pipeline of them, e.g. \"grep -rn 'TODO' src | head -20\". "
        "No ;, &&, redirection or $(...)."))]
    allow_dangerous: Annotated[bool, Meta(description=(
        "true: a command outside the read-only list (tests, builds, linters) is shown to the "
        "user and runs only if approved or allowed by a rule, in workspace-write mode only; it may write in the "
        "workspace, and shell syntax is then allowed"))] = False


class TerminalTool(Tool):
    """Read-only terminal: `run({"command": ...})` returns stdout, labelled stderr and a non-zero
    status; `execute` gives ok=False on refusal or timeout. `workspace` (created if missing),
    `timeout` (s, per pipeline), `max_output_size` (bytes, head and tail), `allow_cd`, `sandbox`
    (True/False/None: require, skip, when it works), `limits` (`ResourceLimits()`); `exec_policy`,
    `session_id`, `ask`: the `allow_dangerous` path (docs/exec.md). Reference: docs/terminal.md."""

    name: ClassVar[str] = "terminal"
    description: ClassVar[str] = (
        "Run a read-only shell command in the workspace and get its output: ls, tree, cat, nl, head, tail, "
        "wc, find, grep, rg, sort, uniq, cut, tr, awk, sed (printing only), file, stat, du, diff, jq, "
        "xargs (feeding one of these), pwd, cd, echo, git status/diff/log/show/ls-files/blame/grep. "
        "Pipes `|` work; ;, &&, redirection, $VAR and $(...) are refused. Paths must stay inside the "
        "workspace; .ctxagent/ (ctxagent's own state) is left out of recursive searches unless named."
    )
    Params: ClassVar[type[ToolParams]] = TerminalParams

    def __init__(self, workspace: str | os.PathLike[str] = ".", timeout: float = 30,
                 max_output_size: int = 65536, *, allow_cd: bool = True, sandbox: bool | None = None,
                 limits: ResourceLimits | None = None, exec_policy: ExecPolicy | None = None,
                 session_id: str | None = None, ask: Ask | None = None) -> None:
        if timeout <= 0 or max_output_size <= 0:
            raise ToolInputError("terminal: timeout and max_output_size must be positive")
        root = Path(workspace)
        root.mkdir(parents=True, exist_ok=True)
        real = os.path.realpath(root)
        self.ctx = PathContext(root=real, cwd=real)
        self.timeout = float(timeout)
        self.max_output_size = int(max_output_size)
        self.allow_cd = allow_cd
        self.sandbox = sandbox
        self.limits = limits or ResourceLimits()
        self.executor = Executor(Path(real), exec_policy or ExecPolicy(), session_id=session_id)
        self.gates = GatedRuns(ask)
        if self.executor.policy.mode == WRITE_MODE:
            self.description = self.description + WRITE_DESCRIPTION  # type: ignore[misc]

    @classmethod
    def for_repo(cls, repo: str | os.PathLike[str], settings: Any = None, *, session_id: str | None = None,
                 client: Any = None) -> TerminalTool:
        """The terminal over repository `repo`, timeout and output cap from `settings.tools`."""
        limits = tool_limits(settings)
        policy = settings.exec_policy() if settings is not None else None
        return cls(workspace=repo, timeout=limits.terminal_timeout_s, max_output_size=limits.terminal_max_output_bytes,
                   exec_policy=policy, session_id=session_id)

    @property
    def workspace(self) -> Path:
        """The workspace root (resolved)."""
        return Path(self.ctx.root)

    @property
    def current_dir(self) -> Path:
        """The directory commands run in (inside the workspace)."""
        return Path(self.ctx.cwd)

    def gate(self, args: dict[str, Any]) -> Gate | None:
        """The approval gate of a call with `allow_dangerous` whose command is not read-only
        (`ctxagent.exec.gate`); None when the call runs on the read-only path."""
        params = self.parse(args)
        command = _command(params)
        if not params.allow_dangerous or self._read_only(command):
            return None
        return self.gates.hold(command, self._command_gate(command))

    def _command_gate(self, command: str) -> Gate:
        cwd = os.path.relpath(self.ctx.cwd, self.ctx.root)
        try:
            where = self.executor.sandbox().describe()
        except ToolRefusedError as exc:
            gate = Gate("terminal", command, "bash", refusal=str(exc))
            return gate
        return self.executor.policy.command_gate(command, details=[f"cwd: {cwd} (in {self.ctx.root})",
                                                                   f"sandbox: {where}"])

    def _read_only(self, command: str) -> bool:
        """Whether `command` passes the read-only checks (so it needs no approval)."""
        try:
            stages = parse_pipeline(command)
            if not (stages[0][0].text == "cd" and len(stages) == 1):
                check_pipeline(stages, self.ctx)
        except (ToolRefusedError, ToolInputError):
            return False
        return True

    def _run(self, params: TerminalParams) -> ToolResult:  # type: ignore[override]
        try:
            return self._run_command(params)
        except (ToolRefusedError, ToolInputError) as exc:  # refusals quote the model's words: escape them
            shown = escape_controls(str(exc))
            if shown == str(exc):
                raise
            raise type(exc)(shown) from None

    def _run_command(self, params: TerminalParams) -> ToolResult:
        command = _command(params)
        self._check_cwd()
        if params.allow_dangerous and not self._read_only(command):
            return self._run_approved(command)
        notes: list[str] = []
        try:
            stages = parse_pipeline(command)
            if stages[0][0].text == "cd" and len(stages) == 1:
                return self._cd(stages[0][1:])
            argvs = check_pipeline(stages, self.ctx, notes)
        except ToolRefusedError as exc:
            if self.executor.policy.mode == WRITE_MODE:
                raise ToolRefusedError(f"{exc} (to ask the user to run it anyway, resend the call with "
                                       "allow_dangerous: true)") from None
            raise
        feeder = next((n for n, stage in enumerate(stages) if stage[0].text == "xargs"), None)
        if feeder is None:
            result = self._execute(argvs)
        else:
            from ctxagent.tools.terminal_xargs import run_with_xargs  # loads with its first use (issue 16)

            result = run_with_xargs(feeder, argvs, stages, self.ctx, self._run_part, timeout=self.timeout,
                                    max_output=self.max_output_size, notes=notes)
        text = "\n".join([format_result(result), *(escape_controls(n) for n in dict.fromkeys(notes))])
        shown = escape_controls(command)
        if result.timed_out:
            return ToolResult(ok=False, content=(
                f"terminal: `{shown}` timed out after {self.timeout:g} s and was killed with every "
                f"process it started; narrow the command (add a path, -maxdepth, head) and retry.\n"
                f"Output before the timeout:\n{text}"))
        if "No space left on device" in result.stderr:
            text += f"\n[the scratch directory (TMPDIR) holds at most {self.limits.scratch_bytes >> 20} MiB]"
        if result.stopped:
            return ToolResult(ok=False, content=(
                f"terminal: `{shown}` was stopped: {result.stopped}; every process it started was "
                f"killed. Narrow the input (a path, grep or head first) and retry.\n"
                f"Output before it was stopped:\n{text}"))
        return ToolResult(ok=True, content=text, data=text)

    def _run_approved(self, command: str) -> ToolResult:
        """Run an approved (or rule-allowed) command line with `sh -c`, checkpointed and
        sandboxed (`ctxagent.exec.executor`)."""
        self.gates.check(command, lambda: self._command_gate(command))
        report = self.executor.run(["/bin/sh", "-c", command], tool="terminal", label=command,
                                   title=f"$ {escape_controls(command)}", cwd=Path(self.ctx.cwd))
        return ToolResult(ok=report.ok, content=report.text, data=report.data)

    def _run_part(self, argvs: list[list[str]], timeout: float, stdin_path: str | None,
                  capture: int | None) -> RunResult:
        """`_execute` for a part of an xargs pipeline (terminal_xargs.Run)."""
        return self._execute(argvs, timeout=timeout, stdin_path=stdin_path, capture=capture)

    def _execute(self, argvs: list[list[str]], *, timeout: float | None = None, stdin_path: str | None = None,
                 capture: int | None = None) -> RunResult:
        """Run the checked pipeline. The run directory holds `tmp/` (the scratch: HOME and
        TMPDIR, the only writable place) and, for git, the sanitized repository view.
        `stdin_path`, `capture`: as in `run_pipeline`; `timeout` defaults to the tool's."""
        use_jail = self._use_jail()
        limits = self.limits
        with tempfile.TemporaryDirectory(prefix="ctxagent-term-") as run_dir:
            scratch = os.path.join(run_dir, "tmp")
            os.mkdir(scratch, 0o700)
            env = safe_env(home=scratch, cwd=self.ctx.cwd)
            readable = [os.path.dirname(p) for p in map(resolve_program, {a[0] for a in argvs})
                        if outside_system_dirs(p)]
            if any(argv[0] == "git" for argv in argvs):
                from ctxagent.shell.commands.git import git_env  # git's modules load with its first use (issue 16)
                from ctxagent.shell.commands.git_repo import prepare_git_view

                env.update(git_env(self.ctx))
                view = prepare_git_view(self.ctx.cwd, self.ctx, env, run_dir, max_index_bytes=limits.scratch_bytes)
                env.update(view.env)
                readable += view.readable
                limits = _room_for_index(limits, env.get("GIT_INDEX_FILE"))
            prefix = None
            if use_jail:
                prefix = jail_prefix(workspace=self.ctx.root, cwd=self.ctx.cwd, scratch=scratch,
                                     scratch_bytes=limits.scratch_bytes, extra_ro=readable)
            pinned: list[list[int]] = []
            try:
                for n, argv in enumerate(argvs):  # open what was checked (issue 17 S14)
                    argvs[n], fds = pin_reads(argv, self.ctx)
                    pinned.append(fds)
                return run_pipeline(argvs, cwd=self.ctx.cwd, env=env, timeout=timeout or self.timeout,
                                    max_output=self.max_output_size, prefix=prefix, limits=limits,
                                    scratch=scratch, pass_fds=pinned, stdin_path=stdin_path, capture=capture)
            finally:
                for fd in (fd for fds in pinned for fd in fds):
                    os.close(fd)

    def _check_cwd(self) -> None:
        """Refuse (and go back to the workspace root) when the current directory is no longer
        where `cd` checked it was: replaced by a link, moved or deleted by another process,
        every command without operands would run there."""
        if self.ctx.cwd == self.ctx.root or (os.path.realpath(self.ctx.cwd) == self.ctx.cwd
                                             and os.path.isdir(self.ctx.cwd)):
            return
        old, self.ctx.cwd = self.ctx.cwd, self.ctx.root
        raise ToolRefusedError(f"terminal: the current directory {old} changed since `cd` (it is now a symbolic "
                               f"link, or gone), so nothing ran; back at the workspace root {self.ctx.root}")

    def _use_jail(self) -> bool:
        if self.sandbox is False:
            return False
        available = jail_available()
        if self.sandbox and not available:
            raise ToolRefusedError("terminal: the bubblewrap jail was required (sandbox=True) but bwrap "
                                   "does not work here; install bubblewrap or use sandbox=None")
        return available

    def _cd(self, args: list[Word]) -> ToolResult:
        if not self.allow_cd:
            raise ToolRefusedError("terminal: cd is turned off for this tool; use paths relative to "
                                   f"{self.ctx.cwd}")
        if len(args) > 1:
            raise ToolRefusedError("terminal: cd takes one directory")
        target = args[0].text if args else "."
        if target == "-" or target.startswith("-"):
            raise ToolRefusedError(f"terminal: cd {target} is not allowed; give a directory path")
        self.ctx.check_path("cd", target)
        new = self.ctx.root if not args else self.ctx.resolve(target)
        if not os.path.isdir(new):
            raise ToolInputError(f"terminal: cd: {target!r} is not a directory")
        self.ctx.cwd = new
        rel = os.path.relpath(new, self.ctx.root)
        text = escape_controls(f"Changed directory to {new} ({'workspace root' if rel == '.' else rel})")
        return ToolResult(ok=True, content=text, data=text)

    def reset_dir(self) -> None:
        """Go back to the workspace root (textbook API)."""
        self.ctx.cwd = self.ctx.root

    def pwd(self) -> str:
        """The current directory, absolute (textbook API)."""
        return self.ctx.cwd


WRITE_DESCRIPTION = (
    " Workspace-write mode: to run anything else (tests, builds, linters, e.g. `python -m pytest -q`, "
    "`ruff check .`, `make`), set allow_dangerous: true; the user sees the command and approves it (or a rule "
    "allows it); it runs in the workspace with a timeout and may write files there.")


def _command(params: TerminalParams) -> str:
    command = params.command.strip()
    if not command:
        raise ToolInputError("terminal: the command is empty; e.g. {\"command\": \"ls -la\"}")
    return command


def format_result(result: RunResult) -> str:
    """stdout, then `[stderr]` and its text, then `[exit status N]` when not 0;
    `(no output)` stands in when the command printed nothing."""
    parts = [strip_line_ends(result.stdout)] if result.stdout.strip() else []
    if result.stderr.strip():
        parts.append("[stderr]\n" + strip_line_ends(result.stderr))
    if not parts:
        parts.append("(no output)")
    status = _status_line(result.returncodes)
    if status and not (result.timed_out or result.stopped):
        parts.append(status)
    return "\n".join(parts)


def _status_line(codes: list[int | None]) -> str:
    """`[exit status 2]`, `[killed by signal 9 (SIGKILL); stage 1: exit status 2]`, or "" when
    all is well. SIGPIPE in an earlier stage is normal (a later stage stopped reading) and
    not shown."""
    items = [_describe(codes[-1])] if codes and codes[-1] else []
    items += [f"stage {i}: {_describe(c)}" for i, c in enumerate(codes[:-1], 1) if c and c != -13]
    return f"[{'; '.join(items)}]" if items else ""


def _describe(code: int) -> str:
    if code >= 0:
        return f"exit status {code}"
    if -code == signal.SIGXFSZ:
        return f"killed by signal {-code} (SIGXFSZ: a file it wrote reached the size limit)"
    try:
        return f"killed by signal {-code} ({signal.Signals(-code).name})"
    except ValueError:
        return f"killed by signal {-code}"


def _room_for_index(limits: ResourceLimits, index: str | None) -> ResourceLimits:
    """`limits` with a file-size limit git's rewrite of the index copy fits in."""
    if not index:
        return limits
    need = 2 * os.path.getsize(index) + (1 << 20)
    return dataclasses.replace(limits, file_bytes=max(limits.file_bytes, need))
