"""A task's isolated working copy, and its diff.

A git repository (path or URL) is cloned (`--shared --no-checkout` for a local path: the
source's objects are read in place, nothing is written into its `.git`, no worktree entry,
no ref), checked out detached at `base_commit` (default: the source's HEAD), submodules
too. A folder outside git is copied (without the batch's output folder) and committed.
`settle()` keeps a setup line's files out of the diff: `git diff --binary` of every change
against the base, new files included, in a format the user's git config cannot change.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ctxagent.batch.tasks import is_git_url
from ctxagent.errors import BatchError

#: Seconds a clone or checkout may take (a URL clone of a large repository is slow).
GIT_TIMEOUT_S = 1800
#: `git diff` flags that fix the format whatever the user's config says (colour, prefixes,
#: external diff tools, rename detection): a plain patch `git apply` and `patch -p1` take.
DIFF_FORMAT = ["--binary", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--submodule=short",
               "--src-prefix=a/", "--dst-prefix=b/"]
#: The folder under the copies' parent that holds one bare clone per repository URL.
MIRRORS = ".mirrors"
_IDENTITY = ["-c", "user.name=ctxagent", "-c", "user.email=ctxagent@localhost", "-c", "commit.gpgsign=false"]


def git_env() -> dict[str, str]:
    """The caller's environment without GIT_* (no foreign GIT_DIR / index), never prompting."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def git(*args: str, cwd: Path | None = None, timeout: float = GIT_TIMEOUT_S) -> str:
    """Run git; its stdout. Raises BatchError with git's own message when it fails."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, env=git_env(), capture_output=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError as exc:
        raise BatchError("git is not installed; batch runs need git for the working copies") from exc
    except subprocess.TimeoutExpired as exc:
        raise BatchError(f"git {args[0]} took over {timeout:.0f} s") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        command = next((a for a in args if not a.startswith("-") and "=" not in a), "")
        raise BatchError(f"git {command} failed: {message[-1] if message else f'exit {done.returncode}'}")
    return done.stdout.decode("utf-8", "replace")


class WorkingCopy:
    """An isolated copy of `repo` (path or URL) at `base_commit`, in a new folder under
    `parent` (default the system's temporary folder). `path`: its root; `base`: the commit
    diffs are taken against. Raises BatchError when the source cannot be copied."""

    def __init__(self, repo: str, base_commit: str | None = None, *, parent: Path | None = None,
                 name: str = "task", exclude: Path | None = None) -> None:
        self.exclude = Path(exclude).resolve() if exclude else None  # never copied (the batch's DIR)
        self.cache = Path(parent) / MIRRORS if parent is not None else Path(tempfile.gettempdir()) / "ctxagent-mirrors"
        if parent is not None:
            parent = Path(parent) / name  # one folder per task: `remove_leftovers` finds a dead worker's copy
            parent.mkdir(parents=True, exist_ok=True)
        self.root = Path(tempfile.mkdtemp(prefix=f"ctxagent-{name}-", dir=parent))
        self.path = self.root / "repo"
        try:
            self.base = self._make(repo, base_commit)
        except BaseException:
            self.remove()
            raise

    def _make(self, repo: str, base_commit: str | None) -> str:
        source = Path(repo)
        if is_git_url(repo) or (source / ".git").exists() or _is_bare(source):
            origin = self._mirror(repo, base_commit) if is_git_url(repo) else repo
            git("clone", "--quiet", "--no-checkout", "--shared", "--", origin, str(self.path))
            if origin != repo:  # submodules' relative URLs are relative to the real one
                git("remote", "set-url", "origin", repo, cwd=self.path)
            commit = self._checkout(repo, base_commit)
            self._submodules(repo, None if is_git_url(repo) else source)
            return commit
        if base_commit:
            raise BatchError(f"{repo} is not a git repository, so base_commit {base_commit!r} cannot be checked out")
        if not source.is_dir():
            raise BatchError(f"repository {repo} does not exist (give a folder, a git repository or a git URL)")
        shutil.copytree(source, self.path, symlinks=True, ignore=self._not_copied)
        git("init", "--quiet", cwd=self.path)
        git("add", "-A", cwd=self.path)
        git(*_IDENTITY, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", "base", cwd=self.path)
        return git("rev-parse", "HEAD", cwd=self.path).strip()

    def _mirror(self, url: str, base_commit: str | None) -> str:
        """A bare clone of `url` under `self.cache`, made once and shared by every task of that
        URL (a SWE-bench split holds hundreds of tasks of a dozen repositories); fetched again
        when it lacks `base_commit` (a mirror kept from an earlier run)."""
        from filelock import FileLock

        self.cache.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", url)[-80:] + "-" + hashlib.sha256(url.encode()).hexdigest()[:12]
        mirror = self.cache / f"{name}.git"
        with FileLock(str(self.cache / f"{name}.lock"), timeout=GIT_TIMEOUT_S):
            if not (mirror / "HEAD").is_file():
                partial = self.cache / f"{name}.partial"
                shutil.rmtree(partial, ignore_errors=True)
                git("clone", "--quiet", "--bare", "--", url, str(partial))
                os.replace(partial, mirror)
            elif base_commit and not _has_commit(mirror, base_commit):
                git("fetch", "--quiet", "--prune", url, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*",
                    cwd=mirror)
        return str(mirror)

    def _checkout(self, repo: str, base_commit: str | None) -> str:
        """Check out base_commit (default HEAD) detached; its full hash. BatchError when it is no commit."""
        wanted = base_commit or "HEAD"
        try:
            commit = git("rev-parse", "--verify", "--quiet", f"{wanted}^{{commit}}", cwd=self.path).strip()
        except BatchError:
            if base_commit:
                raise BatchError(f"{repo}: base_commit {base_commit!r} is not a commit of that repository; give one "
                                 "of its commits (a hash, a tag or a branch), or leave base_commit out") from None
            raise BatchError(f"{repo} has no commit yet; commit its files first (a copy starts at a commit)") from None
        git("-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit, cwd=self.path)
        return commit

    def _submodules(self, repo: str, source: Path | None) -> None:
        """Check out the submodules (recursively), each from the source's own checkout of it
        when there is one (offline, fast), else from its URL. BatchError when one cannot be had."""
        if not (self.path / ".gitmodules").is_file():
            return
        try:
            listed = git("config", "-z", "-f", ".gitmodules", "--get-regexp", r"^submodule\..*\.path$", cwd=self.path)
        except BatchError:
            return  # a .gitmodules naming no submodule
        git("submodule", "--quiet", "init", cwd=self.path)
        for entry in filter(None, listed.split("\0")):
            key, _, sub = entry.partition("\n")
            if source is not None and (source / sub / ".git").exists():
                git("config", f"{key[:-len('.path')]}.url", str(source / sub), cwd=self.path)
        try:
            git("-c", "protocol.file.allow=always", "submodule", "--quiet", "update", "--init", "--recursive",
                cwd=self.path)
        except BatchError as exc:
            raise BatchError(f"{repo}: cannot check out its submodules ({exc}); check them out in the source, or "
                             "make their URLs reachable from the worker") from None

    def _not_copied(self, folder: str, names: list[str]) -> set[str]:
        """copytree's filter: `.ctxagent/`, and the batch's own output folder (when it lies inside
        the source, copying it would copy the copy being made, without end)."""
        skip = {n for n in names if n == ".ctxagent"}
        if self.exclude is not None:
            skip |= {n for n in names if Path(folder, n).resolve() == self.exclude}
        return skip

    def settle(self) -> None:
        """Keep what the copy holds now but git does not track (a setup line's virtualenv, build
        files) out of every later diff: it goes to the copy's `.git/info/exclude`."""
        listed = git("ls-files", "-z", "--others", "--exclude-standard", "--directory", cwd=self.path)
        names = [name for name in listed.split("\0") if name]
        if names:
            info = self.path / ".git" / "info"
            info.mkdir(parents=True, exist_ok=True)
            with open(info / "exclude", "a", encoding="utf-8") as handle:
                handle.write("".join(_exclude_pattern(name) + "\n" for name in names))

    def diff(self) -> str:
        """Every change against the base as one patch in `DIFF_FORMAT` (new and deleted files
        included; `.ctxagent/`, ignored files and what `settle` set aside not); "" when nothing changed."""
        git("add", "-A", cwd=self.path)
        return git("diff", "--cached", *DIFF_FORMAT, self.base, "--", cwd=self.path)

    def remove(self) -> None:
        """Delete the copy (no error if it is gone already), and its task's folder once empty."""
        shutil.rmtree(self.root, ignore_errors=True)
        try:
            self.root.parent.rmdir()
        except OSError:
            pass  # the system's temporary folder, or not empty


def _has_commit(repo: Path, commit: str) -> bool:
    try:
        git("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}", cwd=repo)
        return True
    except BatchError:
        return False


def _is_bare(source: Path) -> bool:
    """A bare repository (`proj.git/` with HEAD, objects/, refs/): cloned, not copied as files."""
    return (source / "HEAD").is_file() and (source / "objects").is_dir() and (source / "refs").is_dir()


def _exclude_pattern(name: str) -> str:
    """`name` (a path git listed, "dir/" for a whole folder) as an anchored, literal exclude pattern."""
    literal = re.sub(r"([\\*?\[\]!#])", r"\\\1", name)
    stripped = literal.rstrip(" ")
    return "/" + stripped + "\\ " * (len(literal) - len(stripped))


def remove_leftovers(parent: Path | str | None, name: str) -> None:
    """Delete what a killed worker left of task `name`'s copies under `parent` (if on this machine)."""
    if parent:
        shutil.rmtree(Path(parent) / name, ignore_errors=True)
