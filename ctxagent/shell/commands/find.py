"""`find` for the terminal tool: starting points are paths, the expression is checked
predicate by predicate against an allow-list of read-only tests and actions.

Refused: predicates that run programs (`-exec`, `-execdir`, `-ok`, `-okdir`), delete
(`-delete`) or write files (`-fprint`, `-fprint0`, `-fprintf`, `-fls`), and options that
follow symbolic links (`-L`, `-H`, `-follow`): a link inside the workspace may lead
outside it. `.ctxagent` is pruned unless named (`hide_in_expression`). Syntax from the
findutils 4.9 manual (`find [-P] [starting-point...] [expression]`).
"""

from __future__ import annotations

import re

from ctxagent.errors import ToolInputError, ToolRefusedError
from ctxagent.shell.hide_state import HIDDEN, hidden_note, names_state
from ctxagent.shell.parse import Word
from ctxagent.shell.paths import PathContext

# Predicates with no argument.
_NO_ARG = frozenset(
    "-print -print0 -ls -empty -true -false -not ! -o -or -a -and ( ) , -depth -prune -quit "
    "-readable -writable -executable -nouser -nogroup -xdev -mount -noleaf -daystart "
    "-ignore_readdir_race -noignore_readdir_race".split()
)
# Predicates whose argument is free text (a glob, a number, a format...).
_VALUE_ARG = frozenset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -type -xtype "
    "-maxdepth -mindepth -size -mtime -mmin -atime -amin -ctime -cmin -used -user -group -uid "
    "-gid -perm -links -inum -lname -ilname -printf -fstype".split()
)
# Predicates whose argument is a file name (checked like any path).
_PATH_ARG = frozenset("-newer -anewer -cnewer -samefile".split())
_NEWER_XY = re.compile(r"^-newer([aBcm])([aBcmt])$")
# Options that may lead the expression (global or positional), kept before the pruning.
_LEADING_OPTIONS = frozenset("-maxdepth -mindepth -regextype -depth -xdev -mount -noleaf -daystart "
                             "-ignore_readdir_race -noignore_readdir_race".split())
# Actions after which find adds no -print of its own (all but -prune).
_ACTIONS = frozenset("-print -print0 -printf -ls -quit".split())

_WHY = {
    "-exec": "runs programs", "-execdir": "runs programs", "-ok": "runs programs",
    "-okdir": "runs programs", "-delete": "deletes files", "-fprint": "writes a file",
    "-fprint0": "writes a file", "-fprintf": "writes a file", "-fls": "writes a file",
    "-L": "follows symbolic links, which may lead outside the workspace",
    "-H": "follows symbolic links, which may lead outside the workspace",
    "-follow": "follows symbolic links, which may lead outside the workspace",
    "-files0-from": "reads starting points from a file",
}


def _allowed() -> str:
    preds = sorted(_NO_ARG | _VALUE_ARG | _PATH_ARG)
    return "allowed predicates: " + " ".join(preds) + " -newerXY; option -P"


def _refuse(word: str, why: str) -> ToolRefusedError:
    return ToolRefusedError(f"find: {word} is not allowed ({why}); {_allowed()}")


def check_find(words: list[Word], ctx: PathContext, notes: list[str] | None = None) -> list[str]:
    """Check `find` arguments (`words` without the command name); return the argv.

    Starting points are expanded like shell globs and must be inside the workspace;
    with none, find searches the current directory. `.ctxagent` is pruned unless named
    (`hide_state`; a line goes to `notes`). Raises ToolRefusedError.
    """
    argv = ["find"]
    i = 0
    while i < len(words) and words[i].text == "-P":
        argv.append("-P")
        i += 1
    starts: list[str] = []
    while i < len(words) and not _starts_expression(words[i].text):
        starts.extend(ctx.expand("find", words[i]))
        i += 1
    argv.extend(starts)
    expression = [w.text for w in words[i:]]
    values = _check_expression(expression, ctx)
    hidden = None
    if not names_state(starts, ctx) and not any(HIDDEN in expression[k] for k in values):
        hidden = hide_in_expression(expression, values)
    argv.extend(expression if hidden is None else hidden)
    if hidden is not None and notes is not None:
        note = hidden_note("find", None, [ctx.resolve(p) for p in starts] or [ctx.cwd], ctx)
        if note:
            notes.append(note)
    return argv


def hide_in_expression(expression: list[str], values: set[int]) -> list[str] | None:
    """`expression` (values: indexes of predicate arguments) rewritten to prune `.ctxagent`:
    `OPTIONS ( -name .ctxagent -o -path */.ctxagent/* ) -prune -o ( REST ) [-print]`.
    None when REST's parentheses do not balance (find then reports the user's error)."""
    j = 0
    while j < len(expression) and expression[j] in _LEADING_OPTIONS:
        j += 2 if expression[j] in _VALUE_ARG else 1
    options, rest = expression[:j], expression[j:]
    operators = [word for k, word in enumerate(rest, j) if k not in values]
    depth = 0
    for word in operators:
        depth += {"(": 1, ")": -1}.get(word, 0)
        if depth < 0:
            return None
    if depth:
        return None
    prune = ["(", "-name", HIDDEN, "-o", "-path", f"*/{HIDDEN}/*", ")", "-prune", "-o"]
    if not rest:
        return [*options, *prune, "-print"]
    # find prints by default only when the expression has no action besides -prune
    action = [] if any(word in _ACTIONS for word in operators) else ["-print"]
    return [*options, *prune, "(", *rest, ")", *action]


def _starts_expression(text: str) -> bool:
    return (text.startswith("-") and text != "-") or text in ("(", ")", "!", ",")


def _check_expression(texts: list[str], ctx: PathContext) -> set[int]:
    """Check each predicate; return the indexes of the words that are predicate arguments."""
    values: set[int] = set()
    i = 0
    while i < len(texts):
        word = texts[i]
        if word in _NO_ARG:
            i += 1
            continue
        if word in _VALUE_ARG or word in _PATH_ARG or _NEWER_XY.match(word):
            if i + 1 >= len(texts):
                raise ToolInputError(f"find: {word} needs an argument")
            newer = _NEWER_XY.match(word)
            if word in _PATH_ARG or (newer and newer.group(2) != "t"):
                ctx.check_path("find", texts[i + 1])
            values.add(i + 1)
            i += 2
            continue
        if word.startswith("-") or word in _WHY:
            raise _refuse(word, _WHY.get(word, "it is not on the allow-list of read-only predicates"))
        raise ToolRefusedError(
            f"find: {word!r} is not allowed here (starting points come before the expression; "
            f"put them first, e.g. `find src docs -name '*.md'`)"
        )
    return values
