"""Run one approved program: own process group, stdin /dev/null, one timeout, capped output.

The program starts a new session; when it ends, times out or is interrupted, its whole
process group gets SIGKILL. stdout/stderr go to bounded `shell.output.HeadTailBuffer`s.
A KeyboardInterrupt is raised again with the partial `Completed` as `exc.completed`
(docs/exec.md, "How a run goes").
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from ctxagent.shell.output import HeadTailBuffer

_DRAIN_AFTER_KILL_S = 0.5


@dataclass
class Completed:
    """What a run produced. exit_code: None when killed by us (timeout, Ctrl-C) or not
    started; negative: killed by that signal. `not_found`: the program does not exist."""

    stdout: HeadTailBuffer
    stderr: HeadTailBuffer
    exit_code: int | None
    duration_s: float
    timed_out: bool = False
    interrupted: bool = False
    not_found: str = ""


def run_program(argv: list[str], *, cwd: str, env: dict[str, str], timeout: float, max_output: int,
                prefix: list[str] | None = None, stdin_bytes: bytes | None = None) -> Completed:
    """Run `prefix + argv` in `cwd` with `env` (seconds, bytes kept per stream); stdin is
    /dev/null, or `stdin_bytes` (from a temporary file: a program that never reads it cannot
    block us). Never raises for the program's own failures; KeyboardInterrupt passes."""
    out, err = HeadTailBuffer(max_output), HeadTailBuffer(max_output)
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        stdin: Any = subprocess.DEVNULL
        if stdin_bytes is not None:
            stdin = stack.enter_context(tempfile.TemporaryFile())
            stdin.write(stdin_bytes)
            stdin.seek(0)
        try:
            proc = subprocess.Popen([*(prefix or []), *argv], cwd=cwd, env=env, stdin=stdin,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                    close_fds=True)
        except OSError as exc:
            return Completed(out, err, None, 0.0, not_found=f"{argv[0]}: {exc.strerror or exc}")
    deadline = started + timeout
    try:
        timed_out = _pump(proc, {proc.stdout.fileno(): out, proc.stderr.fileno(): err}, deadline)  # type: ignore[union-attr]
        if not timed_out:
            timed_out = _wait(proc, deadline)
    except KeyboardInterrupt as exc:
        _kill(proc)
        _finish(proc, out, err)
        exc.completed = Completed(out, err, None, time.monotonic() - started, interrupted=True)  # type: ignore[attr-defined]
        raise
    finally:
        _kill(proc)  # the group: what the program left running in the background dies too
    if timed_out:
        _finish(proc, out, err)
        return Completed(out, err, None, time.monotonic() - started, timed_out=True)
    _close(proc)
    code = proc.returncode
    if prefix and code is not None and 128 < code < 128 + signal.NSIG:
        code = -(code - 128)  # bwrap exits 128 + N when its program died of signal N
    return Completed(out, err, code, time.monotonic() - started)


def _pump(proc: subprocess.Popen[bytes], fds: dict[int, HeadTailBuffer], deadline: float) -> bool:
    """Read both pipes until EOF; True when the deadline passed with the program running.
    Once the program has exited, pipes a background child keeps open are read for
    _DRAIN_AFTER_KILL_S more, not until the deadline."""
    with selectors.DefaultSelector() as sel:
        for fd, buf in fds.items():
            sel.register(fd, selectors.EVENT_READ, buf)
        while sel.get_map():
            now = time.monotonic()
            if now >= deadline:
                return proc.poll() is None
            if proc.poll() is not None:
                deadline = min(deadline, now + _DRAIN_AFTER_KILL_S)
            for key, _ in sel.select(min(deadline - now, 0.2)):
                chunk = os.read(key.fd, 65536)
                if chunk:
                    key.data.feed(chunk)
                else:
                    sel.unregister(key.fd)
    return False


def _wait(proc: subprocess.Popen[bytes], deadline: float) -> bool:
    try:
        proc.wait(timeout=max(deadline - time.monotonic(), 0.001))
        return False
    except subprocess.TimeoutExpired:
        return True


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _finish(proc: subprocess.Popen[bytes], out: HeadTailBuffer, err: HeadTailBuffer) -> None:
    """After a kill: read what is left in the pipes for a moment, reap, close."""
    try:
        fds = {f.fileno(): b for f, b in ((proc.stdout, out), (proc.stderr, err)) if f is not None and not f.closed}
        _pump(proc, fds, time.monotonic() + _DRAIN_AFTER_KILL_S)
    except (OSError, ValueError):
        pass
    try:
        proc.wait(timeout=_DRAIN_AFTER_KILL_S)
    except subprocess.TimeoutExpired:
        pass
    _close(proc)


def _close(proc: subprocess.Popen[bytes]) -> None:
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
