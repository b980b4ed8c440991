"""xargs in the terminal tool: the input is collected first, and every command xargs
would run is checked through the policy as if typed before any of them starts.

The stages before `xargs` run first (their output, at most 1 MiB, is its input; or
`-a FILE`, opened without following links); `shell/commands/xargs.py` splits it into
items and batches; each batch's command is checked by `check_stage` (flags, paths,
scripts, the state folder) and run in turn with /dev/null as stdin, as GNU xargs does;
their output then feeds the stages after `xargs`. docs/terminal.md, "xargs".
"""

from __future__ import annotations

import os
import shlex
import tempfile
import time
from typing import Callable

from ctxagent.errors import ToolInputError, ToolRefusedError
from ctxagent.shell.commands.xargs import (
    MAX_INPUT_BYTES,
    XargsPlan,
    batches,
    exit_status,
    parse_xargs,
    split_input,
    stops,
)
from ctxagent.shell.output import escape_controls, truncate_output
from ctxagent.shell.parse import Word
from ctxagent.shell.paths import PathContext
from ctxagent.shell.pinned import open_checked
from ctxagent.shell.policy import check_stage
from ctxagent.shell.process import RunResult

MAX_FED_OUTPUT = 16 << 20
"""Bytes the fed commands may print together before the pipeline is stopped."""

Run = Callable[[list[list[str]], float, "str | None", "int | None"], RunResult]
"""run(argvs, timeout_s, stdin_path, capture) -> RunResult: one checked pipeline."""


def run_with_xargs(at: int, argvs: list[list[str]], stages: list[list[Word]], ctx: PathContext, run: Run, *,
                   timeout: float, max_output: int, notes: list[str]) -> RunResult:
    """Run the checked pipeline `argvs` whose stage `at` is xargs (`stages`: the parsed
    words, globs kept). Raises ToolRefusedError when a command built from the input is
    refused (nothing of it has run), ToolInputError for input xargs cannot split."""
    deadline = time.monotonic() + timeout
    plan = parse_xargs(stages[at][1:], ctx)
    errors: list[str] = []
    codes: list[int | None] = []
    if plan.arg_file:
        data = _read_arg_file(plan.arg_file, ctx)
    elif at:
        first = run(argvs[:at], timeout, None, MAX_INPUT_BYTES)
        if first.timed_out or first.stopped:
            return first
        errors.append(first.stderr)
        codes += first.returncodes
        if first.captured is None:
            raise ToolRefusedError(f"xargs: its input is over {MAX_INPUT_BYTES >> 20} MiB, which is not allowed; "
                                   "narrow what feeds it (grep -l, head, find -maxdepth)")
        data = first.captured
    else:
        data = b""
    commands = _checked_commands(plan, split_input(data, plan), ctx, notes)
    out = bytearray()
    ran: list[int | None] = []
    for words, argv in commands:
        if plan.verbose:
            errors.append(escape_controls(shlex.join(words)))
        result = run([argv], deadline - time.monotonic(), None, MAX_FED_OUTPUT - len(out))
        errors.append(result.stderr)
        ran.append(result.returncodes[-1] if result.returncodes else None)
        if result.timed_out or result.stopped or result.captured is None:
            stopped = result.stopped or ("" if result.timed_out else
                                         f"the commands xargs ran printed more than {MAX_FED_OUTPUT >> 20} MiB")
            return RunResult(stdout=truncate_output(bytes(out), max_output, escape=True),
                             stderr=_join(errors, max_output), returncodes=[*codes, None],
                             timed_out=result.timed_out, stopped=stopped)
        out += result.captured
        if stops(ran[-1]):
            break
    codes.append(exit_status(ran))
    after = argvs[at + 1:]
    with tempfile.TemporaryDirectory(prefix="ctxagent-xargs-") as folder:
        fed = os.path.join(folder, "out")
        with open(fed, "wb") as f:
            f.write(out)
        last = run(after or [["cat"]], max(deadline - time.monotonic(), 0.001), fed, None)
    errors.append(last.stderr)
    return RunResult(stdout=last.stdout, stderr=_join(errors, max_output),
                     returncodes=[*codes, *(last.returncodes if after else [])],
                     timed_out=last.timed_out, stopped=last.stopped)


def _checked_commands(plan: XargsPlan, lines: list[list[str]], ctx: PathContext,
                      notes: list[str]) -> list[tuple[list[str], list[str]]]:
    """(words as typed, argv) of every command the input makes, each checked by the policy."""
    fixed = sum(len(w.text.encode()) + 1 for w in plan.command)
    out = []
    for items in batches(lines, plan, fixed):
        words = [*plan.command, *(Word(item) for item in items)]
        try:
            argv = check_stage(words, ctx, notes)
        except ToolRefusedError as exc:
            raise ToolRefusedError(f"xargs: the command its input makes is refused, so none ran: {exc}") from None
        out.append(([w.text for w in words], argv))
    return out


def _read_arg_file(path: str, ctx: PathContext) -> bytes:
    fd = open_checked(ctx, path)
    if fd is None:
        raise ToolInputError(f"xargs: -a {path}: not a regular file that can be read")
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise ToolRefusedError(f"xargs: -a {path} is over {MAX_INPUT_BYTES >> 20} MiB, which is not allowed")
    return data


def _join(parts: list[str], limit: int) -> str:
    text = "\n".join(p.rstrip("\n") for p in parts if p.strip())
    return text if len(text.encode()) <= limit else truncate_output(text.encode(), limit)
