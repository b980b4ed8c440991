"""ctxagent's own state folder (`.ctxagent/`: sessions, snapshots, backups, checkpoints)
is left out of the terminal's recursive commands unless a path names it (issue 15, item 2).

Each command gets its own exclusion, put before the user's words (no word of theirs can
take it as a value): grep `--exclude-dir`, ls -R `--ignore`, tree `-I`, du and diff -r
`--exclude`; rg's `--iglob=!` after its flags (its last glob wins); find and git build theirs
in their modules. A path naming the folder or a glob matching it (an rg glob spelling it)
turns hiding off. docs/terminal.md, "ctxagent's state stays out of sight".
"""

from __future__ import annotations

import fnmatch
import os

from ctxagent.shell.flags import Scan
from ctxagent.shell.paths import PathContext
from ctxagent.storage.files import STATE_DIR_NAME

HIDDEN = STATE_DIR_NAME
"""The folder name hidden at any depth (a nested repository's state too)."""

_RECURSIVE = {"grep": {"-r", "--recursive"}, "ls": {"-R", "--recursive"}, "diff": {"-r", "--recursive"}}
_FLAGS = {"grep": f"--exclude-dir={HIDDEN}", "rg": f"--iglob=!{HIDDEN}", "ls": f"--ignore={HIDDEN}",
          "tree": "-I", "du": f"--exclude={HIDDEN}", "diff": f"--exclude={HIDDEN}"}
_SHOWS_HIDDEN = {"ls": {"-a", "-A", "--all", "--almost-all"}, "tree": {"-a"},
                 "rg": {"--hidden", "-."}}
RG_GLOBS = frozenset({"-g", "--glob", "--iglob"})


def names_state(texts: list[str], ctx: PathContext) -> bool:
    """Whether one of the path words `texts` (as given, or expanded) is the state folder or
    lies in it: a component `.ctxagent` in the word or in where it resolves to."""
    for text in texts:
        if HIDDEN in text.split(os.sep):
            return True
        rel = os.path.relpath(ctx.resolve(text), ctx.root)
        if HIDDEN in rel.split(os.sep):
            return True
    return False


def hiding_flags(name: str, result: Scan, paths: list[str], ctx: PathContext) -> list[str]:
    """The words to put right after the command name `name` (rg: after its flags, see
    `policy`) so it skips `.ctxagent` (empty when it does not recurse, or an operand in
    `paths` or an rg glob names the folder)."""
    flag = _FLAGS.get(name)
    if flag is None or names_state(paths, ctx):
        return []
    if name == "rg" and any(HIDDEN in value for value in result.values(RG_GLOBS)):
        return []
    if name in _RECURSIVE and not (result.has(_RECURSIVE[name]) or _grep_recurses(name, result)):
        return []
    return ["-I", HIDDEN] if flag == "-I" else [flag]


def _grep_recurses(name: str, result: Scan) -> bool:
    return name == "grep" and "recurse" in result.values({"-d", "--directories"})


def _glob_matches_state(globs: list[str]) -> bool:
    """Whether one of rg's globs takes the folder in (`*`, `.*`): such a glob shows even a
    hidden folder, so hiding it changed the output."""
    return any(not g.startswith("!") and fnmatch.fnmatchcase(HIDDEN, g.rstrip("/").removeprefix("**/"))
               for g in globs)


def hidden_note(name: str, result: Scan | None, roots: list[str], ctx: PathContext) -> str | None:
    """A line for after the output when a searched directory (absolute paths `roots`) holds
    a state folder the command would have shown; None otherwise."""
    shows = _SHOWS_HIDDEN.get(name)
    if shows is not None and result is not None:
        given = [flag for flag, _ in result.flags]
        if not (set(given) & shows or given.count("-u") + given.count("--unrestricted") >= 2
                or (name == "rg" and _glob_matches_state(result.values(RG_GLOBS)))):
            return None
    found = [os.path.join(root, HIDDEN) for root in roots if os.path.isdir(os.path.join(root, HIDDEN))]
    if not found:
        return None
    shown = os.path.relpath(found[0], ctx.cwd)
    return (f"[{HIDDEN}/ (ctxagent's own sessions, snapshots, backups and checkpoints) was left out; "
            f"name it to look inside, e.g. `ls {shown}`]")
