"""A task's isolated working copy, and its diff.

A git repository (path or URL) is cloned (`--shared --no-checkout` for a local path: the
source's objects are read in place, nothing is written into its `.git`, no worktree entry,
no ref) and checked out detached at `base_commit` (default: the source's HEAD). A folder
outside git is copied and committed as the base. The diff is `git diff --binary` of every
change against the base, new files included; `remove()` deletes the copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ctxagent.batch.tasks import is_git_url
from ctxagent.errors import BatchError

#: Seconds a clone or checkout may take (a URL clone of a large repository is slow).
GIT_TIMEOUT_S = 1800
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
                 name: str = "task") -> None:
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
        if is_git_url(repo) or (source / ".git").exists():
            local = [] if is_git_url(repo) else ["--shared"]
            git("clone", "--quiet", "--no-checkout", *local, repo, str(self.path))
            try:
                git("-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", base_commit or "HEAD",
                    cwd=self.path)
            except BatchError as exc:
                raise BatchError(f"{repo}: cannot check out base_commit {base_commit or 'HEAD'} ({exc}); give a "
                                 "commit of that repository") from None
            return git("rev-parse", "HEAD", cwd=self.path).strip()
        if base_commit:
            raise BatchError(f"{repo} is not a git repository, so base_commit {base_commit!r} cannot be checked out")
        if not source.is_dir():
            raise BatchError(f"repository {repo} does not exist (give a folder, a git repository or a git URL)")
        shutil.copytree(source, self.path, symlinks=True, ignore=shutil.ignore_patterns(".ctxagent"))
        git("init", "--quiet", cwd=self.path)
        git("add", "-A", cwd=self.path)
        git(*_IDENTITY, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", "base", cwd=self.path)
        return git("rev-parse", "HEAD", cwd=self.path).strip()

    def diff(self) -> str:
        """Every change against the base as one `git diff --binary` (new files included,
        `.ctxagent/` and ignored files not); "" when nothing changed."""
        git("add", "-A", cwd=self.path)
        return git("diff", "--cached", "--binary", self.base, cwd=self.path)

    def remove(self) -> None:
        """Delete the copy (no error if it is gone already), and its task's folder once empty."""
        shutil.rmtree(self.root, ignore_errors=True)
        try:
            self.root.parent.rmdir()
        except OSError:
            pass  # the system's temporary folder, or not empty


def remove_leftovers(parent: Path | str | None, name: str) -> None:
    """Delete what a killed worker left of task `name`'s copies under `parent` (if on this machine)."""
    if parent:
        shutil.rmtree(Path(parent) / name, ignore_errors=True)
