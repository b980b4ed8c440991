"""`git` for the terminal tool: read-only subcommands, allow-listed flags, and a git that
cannot be made to run programs by the repository's own configuration.

A repository's `.git/config` is not trusted: `core.fsmonitor`, `filter.*.clean` /
`process`, `diff.*.textconv` / `command`, `diff.external`, `core.pager`,
`log.showSignature` + `gpg.program` all make read commands run programs. So every git
run gets `--no-pager`, `-c` overrides of those keys (HARDENING), `--no-ext-diff
--no-textconv` where they apply, and the environment in `git_env` (no system or global
config, no prompts, no optional index writes, no repository discovery above the
workspace). Filter drivers have no "off" switch, so `prepare_git` reads the names of the
configured `filter.*` drivers (with that same hardened git) and blanks each one.
User options that would undo any of this (`-c`, `-C`, `--git-dir`, `--work-tree`,
`--exec-path`, `--output`, `--ext-diff`, `--textconv`, `--no-index`...) are refused.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from ctxagent.errors import ToolRefusedError
from ctxagent.tools.shell_parse import Word
from ctxagent.tools.terminal_flags import scan
from ctxagent.tools.terminal_git_specs import FORCED_ARGS, SUBCOMMANDS
from ctxagent.tools.terminal_paths import PathContext, is_inside

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
    ("blame.ignoreRevsFile", ""),
)
"""`-c key=value` given to every git run (see module doc)."""

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


def check_git(words: list[Word], ctx: PathContext) -> list[str]:
    """Check `git SUBCOMMAND ARGS` (`words` without `git`); return the hardened argv.

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
    for i, text in enumerate(result.words):
        argv.extend(expanded.get(i, [text]))
    return argv


def prepare_git(cwd: str, ctx: PathContext, env: dict[str, str]) -> dict[str, str]:
    """Extra environment for one git run in `cwd`: each configured filter driver blanked,
    and the index copied into the scratch directory (`env["TMPDIR"]`, GIT_INDEX_FILE).

    `git diff` rewrites the index's stat cache even with GIT_OPTIONAL_LOCKS=0; on a copy
    it cannot change the repository. Runs the hardened git twice (rev-parse, config);
    neither runs repository programs. Raises ToolRefusedError when the repository's work
    tree lies outside the workspace (`core.worktree` or a `.git` file pointing
    elsewhere), or when its filter configuration cannot be read (fail closed).
    """
    extra: dict[str, str] = {}
    code, out = _git_read(["rev-parse", "--show-toplevel", "--git-path", "index"], cwd, env)
    lines = out.splitlines()
    if code == 0 and len(lines) == 2:
        top_real = os.path.realpath(os.path.join(cwd, lines[0]))
        if not is_inside(top_real, ctx.root):
            raise ToolRefusedError(f"git: the repository's work tree {top_real} is outside the workspace; "
                                   f"git is not allowed here")
        extra.update(_index_copy(os.path.join(cwd, lines[1]), env["TMPDIR"]))
    extra.update(_blank_filters(cwd, env))
    return extra


def _index_copy(index: str, scratch: str) -> dict[str, str]:
    if not os.path.isfile(index):
        return {}
    copy = os.path.join(scratch, "git-index")
    shutil.copyfile(index, copy)
    return {"GIT_INDEX_FILE": copy}


def _blank_filters(cwd: str, env: dict[str, str]) -> dict[str, str]:
    """GIT_CONFIG_COUNT/KEY/VALUE entries blanking every configured filter driver."""
    code, names = _git_read(["config", "-z", "--name-only", "--get-regexp", r"^filter\."], cwd, env)
    if code not in (0, 1):  # 1: no filter configured
        raise ToolRefusedError("git: reading the repository's filter configuration failed, so its filter "
                               "programs could not be switched off; git is not allowed here")
    drivers = sorted({n[len("filter."):].rsplit(".", 1)[0] for n in names.split("\0") if n.count(".") >= 2})
    extra: dict[str, str] = {}
    count = 0
    for driver in drivers:
        for key, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            extra[f"GIT_CONFIG_KEY_{count}"] = f"filter.{driver}.{key}"
            extra[f"GIT_CONFIG_VALUE_{count}"] = value
            count += 1
    if count:
        extra["GIT_CONFIG_COUNT"] = str(count)
    return extra


def _git_read(args: list[str], cwd: str, env: dict[str, str]) -> tuple[int, str]:
    """(exit status, stdout) of a hardened `git ARGS` in `cwd`; status -1 if it could not run."""
    cmd = [shutil.which("git", path=env.get("PATH")) or "git", "--no-pager"]
    for key, value in HARDENING:
        cmd += ["-c", f"{key}={value}"]
    try:
        proc = subprocess.run(cmd + args, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return -1, ""
    return proc.returncode, proc.stdout.decode("utf-8", errors="replace")
