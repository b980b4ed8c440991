"""`jq` for the terminal tool: its own option syntax (jq 1.6 and 1.7, not getopt), the
program checked for what reads files, input files confined like any path.

jq reads options by hand: a word is an option when it starts with `-` and a letter or a
second `-` (`-5` is a program); `--arg NAME VALUE` takes two words; `--` is accepted
only after the program (1.6). Refused: `-f`/`--from-file` (a program we cannot check),
`-L` and `import`/`include`/`modulemeta` (read modules and `.json` data files from a
search path), `--args`/`--jsonargs` (here every word after the program is a file).
"""

from __future__ import annotations

import re

from ctxagent.errors import ToolInputError, ToolRefusedError
from ctxagent.shell.parse import Word
from ctxagent.shell.paths import PathContext

_SHORT = frozenset("srjaSCMecnR")
_LONG = frozenset(
    "--slurp --raw-input --null-input --compact-output --tab --color-output --monochrome-output "
    "--ascii-output --unbuffered --sort-keys --raw-output --join-output --exit-status --seq --stream".split()
)
_VALUES = {"--indent": 1, "--arg": 2, "--argjson": 2, "--slurpfile": 2, "--rawfile": 2}
"""Long option -> number of words it takes."""
_FILE_VALUES = ("--slurpfile", "--rawfile")
_WHY = {
    "-f": "reads a program we cannot check from a file; give the program as a word",
    "--from-file": "reads a program we cannot check from a file; give the program as a word",
    "-L": "sets where modules and data files are read from",
    "--args": "here every word after the program is an input file; use --arg NAME VALUE",
    "--jsonargs": "here every word after the program is an input file; use --argjson NAME JSON",
    "--run-tests": "reads a file of tests",
}
_FORBIDDEN_NAMES = ("import", "include", "modulemeta")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*")


def _allowed() -> str:
    short = " ".join(f"-{c}" for c in sorted(_SHORT))
    return f"allowed flags: {short} {' '.join(sorted(_LONG))} --indent N --arg NAME VALUE " \
           "--argjson NAME JSON --slurpfile NAME FILE --rawfile NAME FILE"


def _optionish(text: str) -> bool:
    return len(text) > 1 and text[0] == "-" and (text[1] == "-" or text[1].isascii() and text[1].isalpha())


def check_jq(words: list[Word], ctx: PathContext) -> list[str]:
    """Check `jq ARGS` (`words` without `jq`); return the argv (file values absolute).

    Raises ToolRefusedError for a flag that is not allowed, a program that imports, or a
    file outside the workspace; ToolInputError when the program or a value is missing.
    """
    argv = ["jq"]
    program: str | None = None
    files_only = False
    i = 0
    while i < len(words):
        text = words[i].text
        if files_only or not _optionish(text):
            if program is None:
                program = text
                check_jq_program(text)
                argv.append(text)
            else:
                argv.extend(ctx.expand("jq", words[i], read=True))
            i += 1
        elif text == "--":
            if program is None:
                raise ToolRefusedError("jq: `--` before the program is not allowed (jq 1.6 refuses it); "
                                       "write the program first: jq '.a' -- FILE")
            files_only = True
            argv.append(text)
            i += 1
        elif text.startswith("--"):
            i = _long(text, words, i, argv, ctx)
        else:
            for ch in text[1:]:
                if ch not in _SHORT:
                    why = _WHY.get("-" + ch, "it is not on the allow-list of read-only flags")
                    where = f" (in {text!r})" if len(text) > 2 else ""
                    raise ToolRefusedError(f"jq: -{ch}{where} is not allowed ({why}); {_allowed()}")
            argv.append(text)
            i += 1
    if program is None:
        raise ToolInputError("jq: the program is missing, e.g. jq '.name' package.json")
    return argv


def _long(text: str, words: list[Word], i: int, argv: list[str], ctx: PathContext) -> int:
    if text in _LONG:
        argv.append(text)
        return i + 1
    count = _VALUES.get(text)
    if count is None:
        why = _WHY.get(text.split("=", 1)[0], "it is not on the allow-list of read-only flags (jq takes no --x=VALUE)")
        raise ToolRefusedError(f"jq: {text} is not allowed ({why}); {_allowed()}")
    values = [w.text for w in words[i + 1 : i + 1 + count]]
    if len(values) < count:
        raise ToolInputError(f"jq: {text} needs {count} value{'s' if count > 1 else ''}")
    if text == "--indent" and not values[0].isdigit():
        raise ToolInputError(f"jq: --indent takes a number of spaces, not {values[0]!r}")
    if text in _FILE_VALUES:
        ctx.check_path(f"jq {text}", values[1], read=True)
        values[1] = ctx.resolve(values[1])
    argv.extend([text, *values])
    return i + 1 + count


def check_jq_program(program: str) -> None:
    """Refuse a jq program that names `import`, `include` or `modulemeta` outside string
    literals and field names (they read files from jq's module search path)."""
    for name in _identifiers(program):
        if name.split("::")[-1] in _FORBIDDEN_NAMES:
            raise ToolRefusedError(
                f"jq: `{name}` in the program is not allowed (it reads modules or data files from "
                f"jq's search path, outside the workspace); pass data with --slurpfile NAME FILE")


def _identifiers(program: str) -> list[str]:
    """Identifiers in code (not in strings, comments, after `.` or `$`), interpolations
    `\\(...)` included. An unterminated string counts as code (fail closed)."""
    out: list[str] = []
    depth: list[int] = []  # for each open interpolation, the paren depth at which it closes
    parens, i, n = 0, 0, len(program)
    in_string = False
    while i < n:
        ch = program[i]
        if in_string:
            if ch == "\\" and i + 1 < n and program[i + 1] == "(":
                depth.append(parens)
                parens += 1
                in_string = False
                i += 2
            elif ch == "\\":
                i += 2
            else:
                in_string = ch != '"'
                i += 1
            continue
        if ch == '"':
            in_string = True
        elif ch == "#":
            end = program.find("\n", i)
            i = n if end < 0 else end
            continue
        elif ch == "(":
            parens += 1
        elif ch == ")":
            parens -= 1
            if depth and parens == depth[-1]:
                depth.pop()
                in_string = True
        else:
            match = _IDENT.match(program, i)
            if match and (i == 0 or not (program[i - 1].isalnum() or program[i - 1] in "_")):
                before = program[:i]
                if not before.endswith((".", "$")) or before.endswith(".."):
                    out.append(match.group())
                i = match.end()
                continue
        i += 1
    return out
