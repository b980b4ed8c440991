"""The repository as the terminal's git commands see it: real objects, refs and work tree, allow-listed config.

`prepare_git_view` builds a git directory of our own in the scratch area: the real
entries linked (small files copied), `config` reduced to SAFE_KEYS, the index a copy
(breaker finding F2). Why an allow-list: docs/terminal.md ("git hardening").
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass, field

from ctxagent.errors import ToolRefusedError
from ctxagent.shell.commands.git import HARDENING
from ctxagent.shell.commands.git_dir import check_git_dirs
from ctxagent.shell.paths import PathContext, is_inside

SAFE_KEYS = re.compile(
    r"(core\.(repositoryformatversion|ignorecase|precomposeunicode|filemode|symlinks|autocrlf|eol|"
    r"safecrlf|checkstat|trustctime|quotepath|abbrev|sparsecheckout|sparsecheckoutcone|splitindex|"
    r"untrackedcache|commitgraph|multipackindex)"
    r"|extensions\.[a-z0-9]+|index\.(sparse|version|skiphash)|i18n\.(commitencoding|logoutputencoding)"
    r"|diff\.(renames|renamelimit|algorithm|indentheuristic|context|interhunkcontext)"
    r"|log\.(date|abbrevcommit|showroot)|status\.(showuntrackedfiles|relativepaths|renames|renamelimit)"
    r"|branch\..+\.(remote|merge)|remote\..+\.fetch)"
)
"""Repository config keys kept (as `git config --list` spells them: section and name in
lower case). Each takes a boolean, a number, a word or a ref name, never a path or a
command. `extensions.*` must be kept: git refuses a repository whose extensions it does
not know, and misreads one whose extensions (objectformat=sha256) it was not told of."""

_SKIP = frozenset({"config", "config.worktree", "commondir", "gitdir", "hooks", "index"})
_COPY_MAX_BYTES = 64 * 1024
MAX_CONFIG_BYTES = 4 << 20
"""A bigger .git/config is refused: it is listed into memory before each git run (break test 2026-12-02)."""
_NOT_A_REPO = "not a git repository"


@dataclass
class GitView:
    """env: variables to add for git (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE); empty when
    there is no repository (git then says so itself).
    readable: paths the jail must show read-only (the view; git directories outside the
    workspace, which only a linked worktree may have)."""

    env: dict[str, str] = field(default_factory=dict)
    readable: list[str] = field(default_factory=list)


def prepare_git_view(cwd: str, ctx: PathContext, env: dict[str, str], view_dir: str, *,
                     max_index_bytes: int | None = None) -> GitView:
    """Build the sanitized git directory for a git run in `cwd` under `view_dir` (an empty directory of the
    run's scratch area); return what git and the jail need. The index is copied, up to `max_index_bytes`.
    Raises ToolRefusedError (fail closed) for an unreadable or oversized config, a work tree (`core.worktree`)
    or git directory (not a linked worktree) outside the workspace, a git-dir entry leading outside it
    (`git_dir.check_git_dirs`), or a bigger index."""
    code, out, err = git_read(["rev-parse", "--absolute-git-dir", "--git-common-dir",
                               "--is-inside-work-tree"], cwd, env)
    lines = out.splitlines()
    if code != 0 or len(lines) != 3:
        if _NOT_A_REPO in err:
            return GitView()
        raise _unreadable(err)
    gitdir, common = os.path.realpath(lines[0]), os.path.realpath(os.path.join(cwd, lines[1]))
    top = _work_tree(cwd, ctx, env) if lines[2] == "true" else None
    _check_git_dirs(gitdir, common, top, ctx)
    check_git_dirs([gitdir, common], ctx.root)
    _check_index_size(os.path.join(gitdir, "index"), max_index_bytes)
    view = os.path.join(view_dir, "git")
    os.mkdir(view)
    _link_entries(common, view)
    if gitdir != common:
        _link_entries(gitdir, view, files_only=True)
    _write_config(os.path.join(view, "config"), _safe_entries(common, view_dir, env), bare=top is None)
    extra = {"GIT_DIR": view}
    if top is not None:
        extra["GIT_WORK_TREE"] = top
    index = os.path.join(gitdir, "index")
    if os.path.isfile(index):
        extra["GIT_INDEX_FILE"] = os.path.join(view_dir, "git-index")
        shutil.copyfile(index, extra["GIT_INDEX_FILE"])
    outside = [d for d in {gitdir, common} if not is_inside(d, ctx.root)]
    return GitView(env=extra, readable=[view_dir, *sorted(outside)])


def _check_index_size(index: str, max_bytes: int | None) -> None:
    """Refuse an index bigger than `max_bytes`: it is copied before each git run, in ctxagent."""
    try:
        size = os.path.getsize(index)
    except OSError:
        return
    if max_bytes is not None and size > max_bytes:
        raise ToolRefusedError(
            f"git: the repository's index (.git/index) holds {size >> 20} MiB, more than the "
            f"{max_bytes >> 20} MiB the tool's scratch area may hold (it copies the index before each git "
            f"command), so git did not run; raise ResourceLimits.scratch_bytes, or use rg and cat")


def _unreadable(err: str) -> ToolRefusedError:
    first = next((line for line in err.splitlines() if line.strip()), "no message")[:200]
    return ToolRefusedError(
        f"git: the repository's configuration could not be read ({first!r}), so its filter configuration "
        f"and other settings cannot be checked; git is not allowed here until it is fixed")


def _work_tree(cwd: str, ctx: PathContext, env: dict[str, str]) -> str:
    code, out, err = git_read(["rev-parse", "--show-toplevel"], cwd, env)
    if code != 0 or not out.strip():
        raise _unreadable(err)
    top = os.path.realpath(os.path.join(cwd, out.strip()))
    if not is_inside(top, ctx.root):
        raise ToolRefusedError("git: the repository's work tree (core.worktree) is outside the workspace; "
                               "git is not allowed here")
    return top


def _check_git_dirs(gitdir: str, common: str, top: str | None, ctx: PathContext) -> None:
    """Git directories outside the workspace are allowed only for a linked worktree whose
    repository lists this very work tree (`<common>/worktrees/<name>/gitdir`)."""
    if is_inside(gitdir, ctx.root) and is_inside(common, ctx.root):
        return
    backlink = os.path.join(gitdir, "gitdir")
    linked = (top is not None and os.path.dirname(gitdir) == os.path.join(common, "worktrees")
              and os.path.isfile(backlink) and _read_path(backlink) == os.path.join(top, ".git"))
    if not linked:
        # the outside path is not named (issue 17 S10: a refusal names no outside path)
        raise ToolRefusedError("git: the repository's git directory is outside the workspace (a `.git` "
                               "file, link or commondir leads there, and this is not a linked worktree "
                               "of it); git is not allowed here")


def _read_path(path: str) -> str:
    """The path a small regular file holds, resolved; "" when it is anything else (a
    link, a FIFO, a device: never read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return ""
        text = f.read(_COPY_MAX_BYTES).decode("utf-8", errors="replace").strip()
    return os.path.realpath(text) if text else ""


def _link_entries(src: str, view: str, *, files_only: bool = False) -> None:
    """Symlink (or copy, for small regular files) each entry of `src` into `view`."""
    for entry in os.scandir(src):
        if entry.name in _SKIP or entry.name.endswith(".lock"):
            continue
        dest = os.path.join(view, entry.name)
        if entry.is_file(follow_symlinks=False) and entry.stat().st_size <= _COPY_MAX_BYTES:
            if os.path.lexists(dest):
                os.unlink(dest)
            shutil.copyfile(entry.path, dest)
        elif not files_only and not os.path.lexists(dest):
            os.symlink(entry.path, dest)


def _safe_entries(common: str, scratch: str, env: dict[str, str]) -> list[tuple[str, str | None]]:
    """(key, value) of the repository config's keys matching SAFE_KEYS; value None is a
    bare boolean key. Read by git itself, includes not followed. Raises ToolRefusedError."""
    path = os.path.join(common, "config")
    if not os.path.isfile(path):
        return []
    size = os.path.getsize(path)
    if size > MAX_CONFIG_BYTES:
        raise ToolRefusedError(
            f"git: the repository's configuration (.git/config) holds {size >> 20} MiB, more than the "
            f"{MAX_CONFIG_BYTES >> 20} MiB ctxagent reads to filter it, so git did not run; use rg and cat")
    code, out, err = git_read(["config", "--file", path, "--no-includes", "-z", "--list"], scratch, env)
    if code != 0:
        raise _unreadable(err)
    entries = []
    for item in out.split("\0"):
        key, sep, value = item.partition("\n")
        if key and SAFE_KEYS.fullmatch(key):
            entries.append((key, value if sep else None))
    return entries


def _write_config(path: str, entries: list[tuple[str, str | None]], *, bare: bool) -> None:
    """A git config file with `entries` (and core.bare, since GIT_DIR is set)."""
    sections: dict[tuple[str, str | None], list[str]] = {("core", None): [f"\tbare = {str(bare).lower()}"]}
    for key, value in entries:
        section, _, rest = key.partition(".")
        sub, _, name = rest.rpartition(".")
        line = f"\t{name}" if value is None else f"\t{name} = {_quote(value)}"
        sections.setdefault((section, sub or None), []).append(line)
    text = []
    for (section, sub), lines in sections.items():
        text.append(f"[{section}]" if sub is None else f"[{section} {_quote(sub)}]")
        text.extend(lines)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def git_read(args: list[str], cwd: str, env: dict[str, str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `git --no-pager ARGS` in `cwd` with the hardened
    settings (terminal_git.HARDENING); status -1 if it could not run in 10 s."""
    cmd = [shutil.which("git", path=env.get("PATH")) or "git", "--no-pager"]
    for key, value in HARDENING:
        cmd += ["-c", f"{key}={value}"]
    try:
        proc = subprocess.run(cmd + args, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return -1, "", "git could not run"
    return (proc.returncode, proc.stdout.decode("utf-8", errors="replace"),
            proc.stderr.decode("utf-8", errors="replace"))
