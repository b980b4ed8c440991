"""`find` for the terminal tool: starting points are paths, the expression is checked
predicate by predicate against an allow-list of read-only tests and actions.

Refused: predicates that run programs (`-exec`, `-execdir`, `-ok`, `-okdir`), delete
(`-delete`) or write files (`-fprint`, `-fprint0`, `-fprintf`, `-fls`), and options that
follow symbolic links (`-L`, `-H`, `-follow`): a link inside the workspace may lead
outside it. Syntax from the findutils 4.9 manual (`find [-P] [starting-point...]
[expression]`).
"""

from __future__ import annotations

import re

from ctxagent.errors import ToolInputError, ToolRefusedError
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


def check_find(words: list[Word], ctx: PathContext) -> list[str]:
    """Check `find` arguments (`words` without the command name); return the argv.

    Starting points are expanded like shell globs and must be inside the workspace;
    with none, find searches the current directory. Raises ToolRefusedError.
    """
    argv = ["find"]
    i = 0
    while i < len(words) and words[i].text == "-P":
        argv.append("-P")
        i += 1
    while i < len(words) and not _starts_expression(words[i].text):
        argv.extend(ctx.expand("find", words[i]))
        i += 1
    argv.extend(_check_expression([w.text for w in words[i:]], ctx))
    return argv


def _starts_expression(text: str) -> bool:
    return (text.startswith("-") and text != "-") or text in ("(", ")", "!", ",")


def _check_expression(texts: list[str], ctx: PathContext) -> list[str]:
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
            i += 2
            continue
        if word.startswith("-") or word in _WHY:
            raise _refuse(word, _WHY.get(word, "it is not on the allow-list of read-only predicates"))
        raise ToolRefusedError(
            f"find: {word!r} is not allowed here (starting points come before the expression; "
            f"put them first, e.g. `find src docs -name '*.md'`)"
        )
    return texts
