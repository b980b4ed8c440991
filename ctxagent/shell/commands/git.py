"""`git` for the terminal tool: read-only subcommands, allow-listed flags, a hardened git.

git runs on a sanitized view of the repository (`git_repo.prepare_git_view`) with
`--no-pager`, the HARDENING `-c` overrides, `--no-ext-diff --no-textconv` and `git_env`;
options that would undo this (`-c`, `-C`, `--git-dir`...) are refused. Why each:
docs/terminal.md ("git hardening").
"""

from __future__ import annotations

import os

from ctxagent.errors import ToolRefusedError
from ctxagent.shell.commands.git_specs import FORCED_ARGS, SUBCOMMANDS
from ctxagent.shell.flags import Scan, scan
from ctxagent.shell.hide_state import HIDDEN, names_state
from ctxagent.shell.parse import Word
from ctxagent.shell.paths import PathContext

HARDENING: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("diff.external", ""),
    ("protocol.allow", "never"),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("gpg.openpgp.program", "false"),
    ("gpg.x509.program", "false"),
    ("gpg.ssh.program", "false"),
    ("core.sshCommand", "false"),
    ("credential.helper", ""),
    ("submodule.recurse", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
)
"""`-c key=value` given to every git run (see module doc). A second lock: the keys that
run programs are already absent from the configuration git sees (terminal_git_repo)."""

HIDING_PATHSPEC = f":(top,exclude,glob)**/{HIDDEN}/**"
"""The pathspec git grep and git ls-files get so that ctxagent's state stays out."""

_GLOBAL_WHY = {
    "-c": "it sets configuration; ctxagent sets its own", "-C": "it changes directory; use `cd` first",
    "--git-dir": "it points git at another repository", "--work-tree": "it points git at another directory",
    "--exec-path": "it chooses which programs git runs", "--namespace": "it changes the refs git sees",
    "--config-env": "it sets configuration; ctxagent sets its own",
}


def git_env(ctx: PathContext) -> dict[str, str]:
    """Environment variables added for every git run (values are strings)."""
    return {
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_PAGER": "cat",
        "GIT_CEILING_DIRECTORIES": os.path.dirname(ctx.root) or "/",
    }


def check_git(words: list[Word], ctx: PathContext, notes: list[str] | None = None) -> list[str]:
    """Check `git SUBCOMMAND ARGS` (`words` without `git`); return the hardened argv
    (`git grep` and `git ls-files` leave `.ctxagent` out unless named: `hide_state`).

    Raises ToolRefusedError for a global option, a subcommand that is not read-only,
    a flag that is not allowed, or a path outside the workspace.
    """
    if not words:
        raise ToolRefusedError(f"git: name a subcommand; allowed: {', '.join(SUBCOMMANDS)}")
    sub = words[0].text
    if sub.startswith("-"):
        name = sub.split("=", 1)[0]
        why = _GLOBAL_WHY.get(name, "global options are not allowed")
        raise ToolRefusedError(f"git: {name} is not allowed ({why}); write `git SUBCOMMAND ...` "
                               f"with one of: {', '.join(SUBCOMMANDS)}")
    spec = SUBCOMMANDS.get(sub)
    if spec is None:
        raise ToolRefusedError(f"git: the subcommand {sub!r} is not allowed (only read-only subcommands "
                               f"run here); allowed: {', '.join(SUBCOMMANDS)}")
    args = words[1:]
    result = scan(f"git {sub}", spec, args, ctx)
    for flag, value in result.flags:
        if flag in ("--format", "--pretty") and value and "%G" in value:
            raise ToolRefusedError(f"git {sub}: %G in {flag} is not allowed (it runs gpg to check "
                                   f"signatures); use %H %an %s and the like")
    literal = set()
    if spec.operands == "pattern" and not result.has(spec.pattern_flags) and result.operands:
        literal.add(result.operands[0])
    expanded = {i: ctx.expand(f"git {sub}", args[i]) for i in result.operands if i not in literal}
    argv = ["git", "--no-pager"]
    for key, value in HARDENING:
        argv += ["-c", f"{key}={value}"]
    argv += [sub, *FORCED_ARGS.get(sub, ())]
    dashes = _hiding_dashes(sub, result, expanded, ctx)
    for i, text in enumerate(result.words):
        if i == dashes:
            argv.append("--")
        argv.extend(expanded.get(i, [text]))
    if dashes is not None:
        if dashes == len(result.words):
            argv.append("--")
        argv.append(HIDING_PATHSPEC)
    return argv


def _hiding_dashes(sub: str, result: Scan, expanded: dict[int, list[str]], ctx: PathContext) -> int | None:
    """Where a `--` goes so that HIDING_PATHSPEC can end the argv (the index of the word
    it goes before; len(words): at the end; -1: the user gave one), or None
    to hide nothing: other subcommands, an operand naming `.ctxagent`, or git grep
    operands without `--` that are not all existing paths after every flag (revisions)."""
    if sub not in ("grep", "ls-files"):
        return None
    paths = [p for i in sorted(expanded) for p in expanded[i]]
    if names_state(paths, ctx):
        return None
    if result.end_of_flags is not None:
        return -1
    if sub == "ls-files" or not expanded:
        return len(result.words)
    first = min(expanded)
    after = [i for i in range(first, len(result.words)) if i not in expanded]
    if after or not all(os.path.lexists(os.path.join(ctx.cwd, p)) for p in paths):
        return None
    return first
