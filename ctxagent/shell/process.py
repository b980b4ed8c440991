"""Run a checked pipeline: scrubbed environment, own process groups, one timeout, capped output.

Stages piped by us (no shell), stdin /dev/null or a file, one process group each, SIGKILL on
timeout; `ResourceLimits` as rlimits and a scratch watchdog every SCRATCH_POLL_S (breaker
finding F3); the environment from an allow-list (`safe_env`). docs/terminal.md.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable

from ctxagent.errors import ToolInputError
from ctxagent.shell.limits import SCRATCH_POLL_S, ResourceLimits, ScratchWatch
from ctxagent.shell.output import BINARY_PREVIEW, HeadTailBuffer, binary_preview, looks_binary
from ctxagent.shell.programs import SAFE_PATH, find_program

_PASS_THROUGH = ("TZ",)
_DRAIN_AFTER_KILL_S = 0.5
_TIMEOUT = "timeout"
@dataclass
class RunResult:
    """What a pipeline produced.

    stdout / stderr: decoded text, capped together at the run's `max_output` bytes. returncodes: one per stage
    (negative: killed by that signal; None: not reaped). timed_out: the timeout expired, every group killed.
    stopped: why a limit stopped the pipeline, every group killed ("it wrote more than 256 MiB ..."), else "".
    """

    stdout: str
    stderr: str
    returncodes: list[int | None] = field(default_factory=list)
    timed_out: bool = False
    stopped: str = ""
    captured: bytes | None = None
    """With `capture`: stdout's bytes as written, or None when there were more."""


class _Capture(HeadTailBuffer):
    """A HeadTailBuffer that also keeps every byte, up to `capture` bytes."""

    def __init__(self, limit: int, capture: int) -> None:
        super().__init__(limit)
        self.capture = capture
        self.data: bytearray | None = bytearray()

    def feed(self, chunk: bytes) -> None:
        super().feed(chunk)
        if self.data is not None:
            self.data += chunk
            if len(self.data) > self.capture:
                self.data = None


def safe_env(*, home: str, cwd: str) -> dict[str, str]:
    """A minimal environment: PATH, HOME/TMPDIR (a scratch dir), C.UTF-8 locale, PWD."""
    env = {
        "PATH": SAFE_PATH, "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        "TERM": "dumb", "PWD": cwd, "PAGER": "cat", "NO_COLOR": "1",
    }
    for name in _PASS_THROUGH:
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def resolve_program(name: str) -> str:
    """Absolute path of `name` (shell/programs.py: SAFE_PATH, rg from ctxagent's own
    environment). Raises ToolInputError when it is missing."""
    found = find_program(name)
    if found is None:
        hint = _MISSING_HINTS.get(name, "try another command")
        raise ToolInputError(f"terminal: {name} is not installed on this machine, so nothing ran; {hint}")
    return found


_MISSING_HINTS = {
    "jq": "install jq (e.g. `apt-get install jq`), or read the JSON with cat, head or grep",
    "tree": "try `find . -maxdepth 2` instead",
    "rg": "use `grep -rn PATTERN .` instead",
}


def _on_safe_path(path: str) -> bool:
    return os.path.dirname(path) in SAFE_PATH.split(os.pathsep)


def run_pipeline(argvs: list[list[str]], *, cwd: str, env: dict[str, str], timeout: float,
                 max_output: int, prefix: list[str] | None = None, limits: ResourceLimits | None = None,
                 scratch: str | None = None, pass_fds: list[list[int]] | None = None,
                 stdin_path: str | None = None, capture: int | None = None) -> RunResult:
    """Run `argvs` as a pipeline in `cwd` (timeout s, output cap bytes); `prefix` (a bwrap jail ending in `--`)
    goes before each program, all resolved on SAFE_PATH first (ToolInputError if one is missing: nothing starts).
    `limits`: rlimits (and, with `scratch`, the watchdog's bound); `pass_fds`: per stage, inherited descriptors
    (the caller closes them); `stdin_path`: what the first stage reads (default /dev/null); `capture`: keep up
    to this many bytes of stdout as written (`RunResult.captured`)."""
    paths = [resolve_program(argv[0]) for argv in argvs]
    if prefix:
        # inside the jail bwrap looks the bare name up on SAFE_PATH; a program found
        # elsewhere (rg of ctxagent's environment) is named by its absolute path
        commands = [(None, [*prefix, argv[0] if _on_safe_path(path) else path, *argv[1:]])
                    for path, argv in zip(paths, argvs)]
    else:
        commands = [(path, argv) for path, argv in zip(paths, argvs)]
    watch = ScratchWatch(scratch, limits.scratch_bytes) if limits and scratch else None
    out_buf = HeadTailBuffer(max_output) if capture is None else _Capture(max_output, capture)
    err_buf = HeadTailBuffer(max_output)
    stdin = os.open(stdin_path, os.O_RDONLY | os.O_CLOEXEC) if stdin_path else None
    err_read, err_write = os.pipe()
    deadline = time.monotonic() + timeout  # from the first spawn (issue 17 S12)
    try:
        procs = _start(commands, cwd=cwd, env=env, err_write=err_write,
                       preexec=limits.preexec() if limits else None, pass_fds=pass_fds or [],
                       stdin=subprocess.DEVNULL if stdin is None else stdin)
    except BaseException:
        os.close(err_read)
        raise
    finally:
        os.close(err_write)
        if stdin is not None:
            os.close(stdin)
    stop = "interrupted"
    try:
        fds = {procs[-1].stdout.fileno(): out_buf, err_read: err_buf}  # type: ignore[union-attr]
        stop = _pump(fds, deadline, watch) or _wait_all(procs, deadline, watch)
    finally:
        if stop:
            _kill_groups(procs)
            _pump(fds, time.monotonic() + _DRAIN_AFTER_KILL_S)
            _wait_all(procs, time.monotonic() + _DRAIN_AFTER_KILL_S)
        _close(procs, err_read)
    result = _result(out_buf, err_buf, procs, stop, max_output)
    if isinstance(out_buf, _Capture):
        result.captured = None if out_buf.data is None else bytes(out_buf.data)
    if prefix:
        result.returncodes = [_unwrap_signal(code) for code in result.returncodes]
    return result


def _unwrap_signal(code: int | None) -> int | None:
    """bwrap exits with 128 + N when its program died of signal N: give -N, as Popen does."""
    if code is not None and 128 < code < 128 + signal.NSIG:
        return -(code - 128)
    return code


def _start(commands: list[tuple[str | None, list[str]]], *, cwd: str, env: dict[str, str],
           err_write: int, preexec: Callable[[], None] | None,
           pass_fds: list[list[int]], stdin: int | object) -> list[subprocess.Popen[bytes]]:
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for n, (executable, command) in enumerate(commands):
            fds = tuple(pass_fds[n]) if n < len(pass_fds) else ()
            proc = subprocess.Popen(command, executable=executable, cwd=cwd, env=env, stdin=stdin,
                                    stdout=subprocess.PIPE, stderr=err_write, start_new_session=True,
                                    close_fds=True, pass_fds=fds, preexec_fn=preexec)
            if procs and procs[-1].stdout is not None:
                procs[-1].stdout.close()  # the next stage owns it now
            procs.append(proc)
            stdin = proc.stdout
    except OSError as exc:
        _kill_groups(procs)
        _close(procs)
        raise ToolInputError(f"terminal: could not start {command[0]}: {exc}") from None
    return procs


def _pump(fds: dict[int, HeadTailBuffer], deadline: float, watch: ScratchWatch | None = None) -> str:
    """Read every fd into its buffer until all reach EOF (""), the deadline (_TIMEOUT)
    or the watchdog finds a limit passed (its reason)."""
    with selectors.DefaultSelector() as sel:
        for fd, buf in fds.items():
            sel.register(fd, selectors.EVENT_READ, buf)
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return _TIMEOUT
            for key, _ in sel.select(min(remaining, SCRATCH_POLL_S)):
                chunk = os.read(key.fd, 65536)
                if chunk:
                    key.data.feed(chunk)
                else:
                    sel.unregister(key.fd)
            why = watch.check() if watch else ""
            if why:
                return why
    return ""


def _wait_all(procs: list[subprocess.Popen[bytes]], deadline: float, watch: ScratchWatch | None = None) -> str:
    """Reap every process: "" when all were reaped, _TIMEOUT at the deadline, or the
    watchdog's reason."""
    for proc in procs:
        while True:
            remaining = deadline - time.monotonic()
            try:
                proc.wait(timeout=max(min(remaining, SCRATCH_POLL_S), 0.001))
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    return _TIMEOUT
                why = watch.check() if watch else ""
                if why:
                    return why
    return ""


def _kill_groups(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGKILL the process group of every stage (each stage leads its own group), the last
    stage first: a stage killed before the one feeding it never sees its input end and
    exits 0 as if the pipeline had finished."""
    for proc in reversed(procs):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _close(procs: list[subprocess.Popen[bytes]], *fds: int) -> None:
    for proc in procs:
        if proc.stdout is not None:
            proc.stdout.close()
    for fd in fds:
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass


def _result(out_buf: HeadTailBuffer, err_buf: HeadTailBuffer, procs: list[subprocess.Popen[bytes]],
            stop: str, max_output: int) -> RunResult:
    """Split the byte cap between stdout and stderr: stderr gets what stdout leaves,
    and at least a quarter of the cap when it needs it. Sizes are of the rendered text
    (control characters escaped, U+FFFD for invalid bytes), which is what the cap limits."""
    out_size, err_size = (len(buf.render(max_output, escape=True).encode()) for buf in (out_buf, err_buf))
    err_budget = min(err_size, max(max_output // 4, max_output - out_size))
    out_budget = max_output - err_budget
    head = bytes(out_buf.head)
    binary = out_buf.total > BINARY_PREVIEW and looks_binary(head)  # its escapes would only cost the model tokens
    return RunResult(
        stdout=binary_preview(head, out_buf.total) if binary else out_buf.render(out_budget, escape=True),
        stderr=err_buf.render(err_budget, escape=True),
        returncodes=[p.returncode for p in procs],
        timed_out=stop == _TIMEOUT,
        stopped="" if stop in ("", _TIMEOUT) else stop,
    )
