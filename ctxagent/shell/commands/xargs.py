"""`xargs` for the terminal tool: its flags, how its input splits into items (GNU
findutils 4.9 rules), and the batches of arguments it appends to the fed command.

The items arrive at run time, so the real xargs never runs: the terminal collects the
input, splits and batches it here, and checks each resulting command through the same
policy as a typed one (`tools/terminal_xargs.py`) before any of them starts. Refused:
`-I`/`-i` (input anywhere in the command), `-P` (parallel runs), `-p`/`-o` (the
terminal), `--process-slot-var`, and `cd`, `xargs` or an unknown command as the command.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxagent.errors import ToolInputError, ToolRefusedError
from ctxagent.shell.flags import scan
from ctxagent.shell.parse import Word
from ctxagent.shell.paths import PathContext
from ctxagent.shell.specs import NONE, PATH, VALUE, Spec

MAX_INPUT_BYTES = 1 << 20
"""The input xargs may read (from the stages before it or -a FILE); more is refused."""
MAX_COMMANDS = 100
"""Commands one xargs may run; more is refused (raise -n or narrow the input)."""
MAX_CHARS = 131072
"""Bytes of arguments per command, GNU xargs' default buffer (`xargs --show-limits`)."""

_WHY = {
    "-I": "it puts input anywhere in the command, where a flag or a script could go; the "
          "items are appended at the end instead",
    "-i": "it puts input anywhere in the command; the items are appended at the end instead",
    "--replace": "it puts input anywhere in the command; the items are appended at the end instead",
    "-P": "it runs commands in parallel", "--max-procs": "it runs commands in parallel",
    "-p": "it asks on the terminal", "--interactive": "it asks on the terminal",
    "-o": "it gives the command the terminal", "--open-tty": "it gives the command the terminal",
    "--process-slot-var": "it sets an environment variable",
    "-s": "not supported here; use -n or -L", "--max-chars": "not supported here; use -n or -L",
    "-x": "not supported here", "--exit": "not supported here", "-l": "use -L NUM",
    "-E": "not supported here; cut the input with head or sed first", "-e": "not supported here",
    "--eof": "not supported here",
}
SPEC = Spec(
    short={"0": NONE, "r": NONE, "t": NONE, "d": VALUE, "n": VALUE, "L": VALUE, "a": PATH},
    long={"--null": NONE, "--no-run-if-empty": NONE, "--verbose": NONE, "--delimiter": VALUE,
          "--max-args": VALUE, "--max-lines": VALUE, "--arg-file": PATH},
    permute=False, why=_WHY,
)
"""xargs reads flags up to the first operand, which starts the command (getopt `+`)."""
_ESCAPES = {"\\n": "\n", "\\t": "\t", "\\0": "\0", "\\\\": "\\", "\\r": "\r"}


@dataclass
class XargsPlan:
    """What one xargs does. delimiter: None (blanks, newlines and quotes), or one character;
    max_args / max_lines: per command (None: as many as fit); arg_file: absolute path or
    None (standard input); command: the fed command's words (at least its name)."""

    delimiter: str | None = None
    max_args: int | None = None
    max_lines: int | None = None
    no_run_if_empty: bool = False
    verbose: bool = False
    arg_file: str | None = None
    command: list[Word] = field(default_factory=list)


def parse_xargs(words: list[Word], ctx: PathContext) -> XargsPlan:
    """The plan of `xargs ARGS` (`words` without `xargs`). Raises ToolRefusedError for a
    flag that is not allowed or a file outside the workspace, ToolInputError for a bad value."""
    result = scan("xargs", SPEC, words, ctx)
    plan = XargsPlan(command=[words[i] for i in result.operands] or [Word("echo")])
    for flag, value in result.flags:
        if flag in ("-0", "--null"):
            plan.delimiter = "\0"
        elif flag in ("-d", "--delimiter"):
            plan.delimiter = _delimiter(value or "")
        elif flag in ("-n", "--max-args"):
            plan.max_args, plan.max_lines = _count(flag, value), None
        elif flag in ("-L", "--max-lines"):
            plan.max_lines, plan.max_args = _count(flag, value), None
        elif flag in ("-r", "--no-run-if-empty"):
            plan.no_run_if_empty = True
        elif flag in ("-t", "--verbose"):
            plan.verbose = True
    for _flag, _value, index, prefix in result.path_values:
        plan.arg_file = result.words[index][len(prefix):]
    name = plan.command[0].text
    if name in ("cd", "xargs"):
        raise ToolRefusedError(f"xargs: the command {name!r} is not allowed here (xargs feeds one "
                               f"read-only command, e.g. `xargs grep -n TODO`)")
    return plan


def _delimiter(text: str) -> str:
    char = _ESCAPES.get(text, text)
    if len(char) != 1:
        raise ToolInputError(f"xargs: -d takes one character (or \\n, \\t, \\0, \\r, \\\\), not {text!r}")
    return char


def _count(flag: str, value: str | None) -> int:
    if not (value or "").isdigit() or int(value or "0") < 1:
        raise ToolInputError(f"xargs: {flag} takes a positive number, not {value!r}")
    return int(value or "0")


def split_input(data: bytes, plan: XargsPlan) -> list[list[str]]:
    """The items of `data`, as input lines (lists of items). Raises ToolInputError for an
    unmatched quote, a NUL byte where it cannot go, or input that is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolInputError("xargs: its input is not valid UTF-8 text") from None
    if plan.delimiter is not None:
        parts = text.split(plan.delimiter)
        if parts and parts[-1] == "":
            parts.pop()
        lines = [[p] for p in parts]
    else:
        lines = _split_quoted(text)
    if any("\0" in item for line in lines for item in line):
        raise ToolInputError("xargs: its input holds a NUL byte; use -0 for NUL-separated input")
    return lines


def _split_quoted(text: str) -> list[list[str]]:
    """GNU xargs' default: items end at blanks and newlines; '...', "..." and a backslash
    protect them; quotes cannot span lines; a line ending in a blank goes on."""
    lines: list[list[str]] = []
    line: list[str] = []
    item: list[str] = []
    have, quote, i = False, "", 0
    while i < len(text):
        ch = text[i]
        i += 1
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\n":
                kind = "single" if quote == "'" else "double"
                raise ToolInputError(f"xargs: unmatched {kind} quote in its input; by default quotes "
                                     "are special to xargs unless you use -0 or -d '\\n'")
            else:
                item.append(ch)
            continue
        if ch in " \t\n":
            if have:
                line.append("".join(item))
                item, have = [], False
            if ch == "\n" and line and not (i >= 2 and text[i - 2] in " \t"):
                lines.append(line)
                line = []
        elif ch in "'\"":
            quote, have = ch, True
        elif ch == "\\" and i < len(text):
            item.append(text[i])
            i += 1
            have = True
        else:
            item.append(ch)
            have = True
    if quote:
        raise ToolInputError("xargs: unmatched quote at the end of its input")
    if have:
        line.append("".join(item))
    if line:
        lines.append(line)
    return lines


def batches(lines: list[list[str]], plan: XargsPlan, fixed_chars: int) -> list[list[str]]:
    """The items to append to each command run (`fixed_chars`: bytes of the command's own
    words). Raises ToolInputError for an item longer than MAX_CHARS, ToolRefusedError for
    more than MAX_COMMANDS commands."""
    room = MAX_CHARS - fixed_chars
    out: list[list[str]] = []
    current: list[str] = []
    size = lines_in = 0
    for line in lines:
        if plan.max_lines is not None and lines_in == plan.max_lines:
            out.append(current)
            current, size, lines_in = [], 0, 0
        for item in line:
            need = len(item.encode()) + 1
            if need > room:
                raise ToolInputError(f"xargs: an input item of {need - 1} bytes is longer than a command "
                                     f"line may be ({room} bytes)")
            full = size + need > room or (plan.max_args is not None and len(current) == plan.max_args)
            if full and current:
                out.append(current)
                current, size, lines_in = [], 0, 0
            current.append(item)
            size += need
        lines_in += 1
    if current or (not out and not plan.no_run_if_empty):
        out.append(current)
    if len(out) > MAX_COMMANDS:
        raise ToolRefusedError(f"xargs: its input makes {len(out)} commands (more than {MAX_COMMANDS}); "
                               "raise -n, or narrow the input (grep -l, head)")
    return out


def exit_status(codes: list[int | None]) -> int:
    """GNU xargs' status for the commands' exit codes (as many as ran): 0, 123 (one exited
    1-125), 124 (exited 255), 125 (killed by a signal), or 126/127."""
    status = 0
    for code in codes:
        if code is None or code < 0:
            return 125
        if code == 255:
            return 124
        if code in (126, 127):
            return code
        if code:
            status = 123
    return status


def stops(code: int | None) -> bool:
    """Whether xargs runs no further command after one that exited with `code`."""
    return code is None or code < 0 or code in (126, 127, 255)
