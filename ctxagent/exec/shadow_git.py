"""The shadow git repository of checkpoints: git run with its own GIT_DIR and index.

The work tree is the user's repository, but nothing of the user's git is read or written:
a scrubbed environment (no user or system config, no hooks, no GIT_* of the caller),
attributes that store every file's bytes as they are (no eol or filter conversion), and
an exclude list that keeps `.ctxagent/` out.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

from ctxagent.errors import StorageError

#: Config every shadow git command runs with (`-c`), overriding anything else.
CONFIG = (
    "core.hooksPath=/dev/null", "core.fsmonitor=false", "core.untrackedCache=true",
    "core.autocrlf=false", "core.safecrlf=false", "core.quotePath=false", "core.bare=false",
    "core.symlinks=true", "core.ignoreCase=false", "core.preloadIndex=true", "core.fileMode=true",
    "core.splitIndex=false", "core.compression=1", "index.version=4", "gc.auto=0", "maintenance.auto=false",
    "commit.gpgSign=false", "advice.addEmbeddedRepo=false", "user.name=ctxagent",
    "user.email=ctxagent@localhost", "init.defaultBranch=checkpoints",
)
#: `info/attributes` of the shadow repository: bytes stored and restored unchanged.
ATTRIBUTES = "* -text -ident -filter -working-tree-encoding !eol\n"
#: File in the shadow GIT_DIR holding the pid of the last git started (see `reap_orphan`).
RUNNING = "ctxagent-git.pid"
#: Name suffix of a repository being created (`init`), before it is renamed into place.
INIT_SUFFIX = ".init-"
#: Seconds one git command may take before the checkpoint is abandoned.
GIT_TIMEOUT_S = 300.0


class GitFailed(StorageError):
    """A shadow git command exited non-zero; `stderr` holds its message."""

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(message)
        self.stderr = stderr


class ShadowGit:
    """git on `work_tree` with `git_dir` as its repository and `git_dir/index` as its index."""

    def __init__(self, git_dir: Path, work_tree: Path) -> None:
        self.git_dir = Path(git_dir)
        self.work_tree = Path(work_tree)
        self.env = _environment(self.git_dir, self.work_tree)

    def run(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> bytes:
        """Run `git <args>` and return its stdout. Raises GitFailed (exit status, stderr)
        or StorageError (git missing, timeout)."""
        return self._finish(self._start(args, input, env), args, input)

    def run_parallel(self, *commands: tuple[str, ...]) -> list[bytes]:
        """Run read-only git commands side by side (2 cores: a snapshot's two scans at
        once); their stdouts in order. Raises as `run`."""
        procs = [self._start(args, None, None) for args in commands]
        return [self._finish(proc, args, None) for proc, args in zip(procs, commands)]

    def _start(self, args: tuple[str, ...], input: bytes | None, env: dict[str, str] | None) -> subprocess.Popen:
        argv = ["git", "--no-replace-objects"]
        for item in CONFIG:
            argv += ["-c", item]
        argv += list(args)
        try:
            proc = subprocess.Popen(argv, cwd=self.work_tree, env=self.env if env is None else env,
                                    stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except FileNotFoundError:
            raise StorageError("checkpoints need git on PATH; install git (any version since 2.25)") from None
        except OSError as exc:
            raise StorageError(f"cannot run git for checkpoints: {exc.strerror or exc}") from exc
        self._note_running(proc.pid)
        return proc

    def _finish(self, proc: subprocess.Popen, args: tuple[str, ...], input: bytes | None) -> bytes:
        try:
            stdout, stderr = proc.communicate(input, timeout=GIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise StorageError(f"git {args[0]} took over {GIT_TIMEOUT_S:.0f} s while checkpointing") from None
        except BaseException:  # Ctrl-C: git must not go on writing the index on its own
            proc.kill()
            proc.wait()
            raise
        if proc.returncode:
            err = stderr.decode("utf-8", "replace").strip()
            status = f"exit status {proc.returncode}" if proc.returncode > 0 else f"killed by {_signal_name(-proc.returncode)}"
            raise GitFailed(f"git {args[0]} failed: {err[-500:] or status}", err)
        return stdout

    def _note_running(self, pid: int) -> None:
        try:
            (self.git_dir / RUNNING).write_text(str(pid), encoding="ascii")
        except OSError:
            pass  # before init, or unwritable: nothing to reap later

    def reap_orphan(self) -> None:
        """Kill the git a killed ctxagent left running on this store (its locks are then
        stale). Called under the store's lock; only a live `git` process is killed (Linux)."""
        try:
            pid = int((self.git_dir / RUNNING).read_text(encoding="ascii"))
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            return
        if cmdline and os.path.basename(cmdline[0]) == b"git" and str(self.git_dir).encode() in _environ(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def init(self) -> None:
        """Create the repository (objects, refs, attributes, excludes), whole or not at all:
        built in `<git_dir>.init-<pid>` and renamed into place. Raises GitFailed, OSError."""
        tmp = self.git_dir.with_name(f"{self.git_dir.name}{INIT_SUFFIX}{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        bare = {k: v for k, v in self.env.items() if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")}
        self.run("init", "-q", "--bare", str(tmp), env=bare)
        info = tmp / "info"
        info.mkdir(exist_ok=True)
        (info / "attributes").write_text(ATTRIBUTES, encoding="utf-8")
        (info / "exclude").write_text(_excludes(self.work_tree), encoding="utf-8")
        os.rename(tmp, self.git_dir)

    def sweep_inits(self) -> None:
        """Remove half-made repositories a killed `init` left (under the store's lock)."""
        for stale in self.git_dir.parent.glob(f"{self.git_dir.name}{INIT_SUFFIX}*"):
            shutil.rmtree(stale, ignore_errors=True)


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def _signal_name(number: int) -> str:
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
    return name + (" (a file size limit: is the disk full?)" if name == "SIGXFSZ" else "")


def _environment(git_dir: Path, work_tree: Path) -> dict[str, str]:
    """Only what git needs: PATH and the shadow repository; HOME and XDG point at nothing."""
    nowhere = str(git_dir / "no-home")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LANG": "C",
        "HOME": nowhere, "XDG_CONFIG_HOME": nowhere, "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
        "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(work_tree), "GIT_INDEX_FILE": str(git_dir / "index"),
        "GIT_LITERAL_PATHSPECS": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_AUTHOR_NAME": "ctxagent", "GIT_AUTHOR_EMAIL": "ctxagent@localhost",
        "GIT_COMMITTER_NAME": "ctxagent", "GIT_COMMITTER_EMAIL": "ctxagent@localhost",
    }
    return env


def _excludes(work_tree: Path) -> str:
    """`.ctxagent/` and `.git` always; the user's own `.git/info/exclude` too, read only."""
    lines = ["/.ctxagent/", ".git"]
    try:
        lines.append((work_tree / ".git" / "info" / "exclude").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        pass
    return "\n".join(lines) + "\n"
