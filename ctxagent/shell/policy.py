"""The terminal tool's policy: which commands, flags, operands and scripts may run.

`check_pipeline(stages, ctx)` returns each stage's argv or raises `ToolRefusedError`
naming the word, the reason and what is allowed; nothing runs before every stage passes.
Flags: `specs`/`flags`; paths: `paths`; scripts: `commands.sed`/`awk`; `.ctxagent` left out of
recursive commands: `hide_state`; xargs: `commands.xargs` (docs/terminal.md).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import lru_cache

from ctxagent.errors import ToolInputError, ToolRefusedError
from ctxagent.shell.commands.find import check_find
from ctxagent.shell.commands.rg import rg_ignore_flags
from ctxagent.shell.commands.xargs import parse_xargs
from ctxagent.shell.flags import Scan, scan
from ctxagent.shell.hide_state import hidden_note, hiding_flags
from ctxagent.shell.parse import Word
from ctxagent.shell.paths import PathContext
from ctxagent.shell.process import SAFE_PATH
from ctxagent.shell.specs import SPECS, Spec

COMMANDS = tuple(sorted([*SPECS, "find", "git", "jq", "xargs", "cd"]))
"""Every command name the terminal tool accepts."""

#: Commands whose path operands are listed or stat'ed, never read (a FIFO among them is fine).
_LISTS_ONLY = frozenset({"ls", "tree", "du", "stat", "file"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_AWK_PROTECTED = ("ARGV", "ARGC", "ENVIRON", "PROCINFO")


def check_pipeline(stages: list[list[Word]], ctx: PathContext, notes: list[str] | None = None) -> list[list[str]]:
    """Check every stage of a pipeline; return the argv to run for each. `notes`, when
    given, receives lines to show after the output (what ctxagent changed, and why).

    Raises ToolRefusedError for the first word that is not allowed.
    """
    if len(stages) > 1 and any(stage[0].text == "cd" for stage in stages):
        raise ToolRefusedError("terminal: cd cannot be part of a pipeline; run `cd DIR` on its own first")
    feeders = [n for n, stage in enumerate(stages) if stage[0].text == "xargs"]
    if len(feeders) > 1:
        raise ToolRefusedError("terminal: one xargs per command line is allowed; run the first part on its own")
    argvs = [check_stage(stage, ctx, notes) for stage in stages]
    if feeders and feeders[0] > 0 and parse_xargs(stages[feeders[0]][1:], ctx).arg_file:
        raise ToolRefusedError("xargs: -a FILE is not allowed after a `|` (its items come from the file, "
                               "so the pipe would feed nothing); run `xargs -a FILE ...` on its own")
    return argvs


def check_stage(words: list[Word], ctx: PathContext, notes: list[str] | None = None) -> list[str]:
    """Check one command (its name and arguments); return its argv. Raises ToolRefusedError."""
    name = words[0].text
    if name == "find":
        return check_find(words[1:], ctx, notes)
    if name == "git":  # git's, jq's, sed's and awk's checkers load when their command comes (start-up, issue 16)
        from ctxagent.shell.commands.git import check_git

        return check_git(words[1:], ctx, notes)
    if name == "jq":
        from ctxagent.shell.commands.jq import check_jq

        return check_jq(words[1:], ctx)
    if name == "xargs":
        return check_xargs(words, ctx)
    spec = SPECS.get(name)
    if spec is None:
        raise _unknown_command(name)
    if spec.operands == "text":
        return [w.text for w in words]
    result = scan(name, spec, words[1:], ctx)
    paths: list[str] = []
    argv = _assemble(name, spec, words[1:], result, ctx, paths)
    roots = [ctx.resolve(p) for p in paths] or [ctx.cwd]
    if name in _SANDBOX_PROBES and _has_sandbox(name):
        argv.insert(1, "--sandbox")  # GNU sed and gawk refuse e/r/w, system(), redirection, new ARGV files
    if name == "diff":
        argv.insert(1, "--no-dereference")  # -r would follow links out of the workspace
    if name == "rg":
        argv[1:1] = rg_ignore_flags(result, roots, ctx, notes)
    hiding = hiding_flags(name, result, paths, ctx)
    if hiding:
        at = _end_of_flags_at(argv, result) if name == "rg" else 1  # rg: the last glob wins
        argv[at:at] = hiding
        note = hidden_note(name, result, roots, ctx)
        if note and notes is not None:
            notes.append(note)
    return argv


def _end_of_flags_at(argv: list[str], result: Scan) -> int:
    """Where the `--` that ended the flags sits in `argv` (len(argv) when none): the
    words before it that read `--` are flag values, and no operand before it does."""
    if result.end_of_flags is None:
        return len(argv)
    skip = result.words[: result.end_of_flags].count("--")
    seen = [n for n, word in enumerate(argv) if word == "--"]
    return seen[skip]


def check_xargs(words: list[Word], ctx: PathContext) -> list[str]:
    """Check `xargs FLAGS COMMAND ARGS` as far as it can be before its input is known: its
    flags, and the command and its own words as if typed (a refusal there stands whatever
    the input). Returns the words as typed; the terminal runs the batches itself."""
    plan = parse_xargs(words[1:], ctx)
    name = plan.command[0].text
    if name not in COMMANDS:
        raise _unknown_command(name)
    try:
        check_stage(plan.command, ctx)
    except ToolInputError:
        pass  # an operand the input will give (`xargs grep -l` without its pattern yet)
    return [w.text for w in words]


def _unknown_command(name: str) -> ToolRefusedError:
    if "/" in name and name.rsplit("/", 1)[-1] in COMMANDS:
        hint = f"use the bare name `{name.rsplit('/', 1)[-1]}`"
    else:
        hint = "allowed commands: " + ", ".join(COMMANDS) + " (git: status, diff, log, show, ls-files, blame, grep)"
    return ToolRefusedError(
        f"terminal: the command {name!r} is not allowed (this terminal is read-only and runs "
        f"only listed commands); {hint}"
    )


def _assemble(name: str, spec: Spec, words: list[Word], result: Scan, ctx: PathContext,
              paths: list[str]) -> list[str]:
    """The argv: the words as scanned (PATH flag values made absolute), with path
    operands glob-expanded and checked (appended to `paths`)."""
    operand_idx = list(result.operands)
    literal: set[int] = set()  # operands that are text (pattern, script, program, assignment)
    if spec.operands in ("pattern", "script", "program") and not result.has(spec.pattern_flags):
        if not operand_idx:
            raise ToolInputError(f"{name}: a {spec.operands} operand is missing")
        literal.add(operand_idx[0])
    if spec.operands == "strings":
        literal.update(operand_idx)
        if spec.max_operands is not None and len(operand_idx) > spec.max_operands:
            raise ToolRefusedError(f"{name}: more than {spec.max_operands} operands are not allowed (SET1 SET2; "
                                   f"{name} reads standard input only): pipe a file in with `cat FILE | {name} ...`")
    _check_scripts(name, spec, words, result, literal)
    if name == "grep":
        _check_grep_devices(result)
    expanded: dict[int, list[str]] = {}
    for i in operand_idx:
        if i in literal:
            continue
        if name == "awk" and _ASSIGNMENT.match(words[i].text):
            _check_awk_assignment(words[i].text)
            continue
        if spec.operands == "none":
            raise ToolRefusedError(f"{name}: the operand {words[i].text!r} is not allowed ({name} takes none)")
        expanded[i] = ctx.expand(name, words[i], read=name not in _LISTS_ONLY)
        if name == "diff":
            expanded[i] = [_dereference(p, ctx) for p in expanded[i]]
        paths.extend(expanded[i])
    _check_operand_count(name, spec, sum(len(v) for v in expanded.values()))
    argv = [name]
    for i, text in enumerate(result.words):
        argv.extend(expanded.get(i, [text]))
    return argv


def _dereference(text: str, ctx: PathContext) -> str:
    """A diff operand that is a symbolic link (checked to resolve inside): the file it leads
    to, relative to the current directory, since diff runs with --no-dereference."""
    if text == "-" or not os.path.islink(os.path.join(ctx.cwd, text)):
        return text
    real = os.path.relpath(ctx.resolve(text), ctx.cwd)
    return "./" + real if real.startswith("-") else real


def _check_scripts(name: str, spec: Spec, words: list[Word], result: Scan, literal: set[int]) -> None:
    if name == "sed":
        from ctxagent.shell.commands.sed import check_sed_script

        scripts = result.values(spec.pattern_flags) + [words[i].text for i in sorted(literal)]
        check_sed_script("\n".join(scripts))
    elif name == "awk":
        from ctxagent.shell.commands.awk import check_awk_program

        for value in result.values({"-v"}):
            _check_awk_assignment(value)
        check_awk_program(words[min(literal)].text)


def _check_grep_devices(result: Scan) -> None:
    """Refuse `grep -D read` when grep recurses: it would open the FIFOs it meets, which
    grep skips by default, and wait for a writer until the timeout. Raises ToolRefusedError."""
    recurses = result.has({"-r", "--recursive"}) or "recurse" in result.values({"-d", "--directories"})
    if recurses and "read" in result.values({"-D", "--devices"}):
        raise ToolRefusedError("grep: -D read is not allowed with -r (it opens the FIFOs and devices met while "
                               "recursing, which waits until the command times out); leave -D out: grep -r "
                               "skips them")


def _check_awk_assignment(text: str) -> None:
    var = text.split("=", 1)[0]
    if var in _AWK_PROTECTED:
        raise ToolRefusedError(f"awk: assigning {var} is not allowed (it can change which files are read)")


def _check_operand_count(name: str, spec: Spec, count: int) -> None:
    if spec.max_operands is not None and count > spec.max_operands:
        extra = " (a second operand is the output file uniq would write)" if name == "uniq" else ""
        raise ToolRefusedError(
            f"{name}: more than {spec.max_operands} file operand is not allowed (got {count}){extra}; "
            f"pipe several files in with `cat a b | {name}`"
        )


_SANDBOX_PROBES = {"sed": ("-n", "p"), "awk": ("BEGIN { }",)}


@lru_cache(maxsize=2)
def _has_sandbox(name: str) -> bool:
    """Whether this `name` (sed or awk) has GNU's `--sandbox` (GNU sed, gawk; not mawk): a
    second lock behind the script checks."""
    program = shutil.which(name, path=SAFE_PATH)
    if program is None:
        return False
    try:
        proc = subprocess.run([program, "--sandbox", *_SANDBOX_PROBES[name]], input=b"", capture_output=True,
                              timeout=5)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0
