"""`LocalServer`: start, wait for, and stop the offline model's server process.

`with LocalServer() as server: client = LLMClient(server.settings())`. Own process group,
log in a temporary file; ready when `GET /v1/models` answers 200; stopped with SIGTERM
then SIGKILL on exit, at atexit, or by the server when its parent dies (docs/local-model.md).
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from ctxagent.errors import LLMError
from ctxagent.llm.local.bundle import DEFAULT_N_CTX, LocalModel, find_model, local_model_settings
from ctxagent.llm.settings import ModelSettings

STARTUP_TIMEOUT_S = 120.0
"""Seconds to wait for readiness: imports take about 2 s and a model load under 1 s here,
but a loaded 2-core machine can be ten times slower."""
STOP_GRACE_S = 5.0
"""Seconds between SIGTERM and SIGKILL."""

_LIVE: set["LocalServer"] = set()
_LIVE_LOCK = threading.Lock()


class LocalServerError(LLMError):
    """The offline model's server could not start or answer. The message carries the
    tail of its log."""


class LocalServer:
    """A running llama.cpp server for one offline model (a context manager).

    model_path: a bundled key ("smollm2", "gemma3"), a .gguf path, or None (CTXAGENT_LOCAL_MODEL / the default);
    port: 0 picks a free port; n_ctx: context tokens; chat_format: "chatml", "gemma" or None (the model's family);
    max_calls, call_first, no_repeat: TurnPolicy. Raises ConfigError (no model), LocalServerError from `start()`.
    """

    def __init__(self, model_path: str | Path | None = None, *, port: int = 0,
                 n_ctx: int = DEFAULT_N_CTX, chat_format: str | None = None, n_threads: int = 2,
                 startup_timeout_s: float = STARTUP_TIMEOUT_S, max_calls: int = 3,
                 call_first: bool = True, no_repeat: bool = True) -> None:
        self.model: LocalModel = find_model(str(model_path) if model_path else None)
        self.family = chat_format or self.model.family
        self.n_ctx, self.n_threads, self.requested_port = n_ctx, n_threads, port
        self.startup_timeout_s = startup_timeout_s
        self.max_calls, self.call_first, self.no_repeat = max_calls, call_first, no_repeat
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self._dir: Path | None = None

    @property
    def base_url(self) -> str:
        """http://127.0.0.1:<port>/v1 (only once started)."""
        if self.port is None:
            raise LocalServerError("the offline model server is not running; call start() first")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def log_path(self) -> Path | None:
        """The server's log file from start() until stop() removes it; an error from a
        request (`ctxagent.llm.local.client`) quotes it before the server is stopped."""
        return self._dir / "server.log" if self._dir else None

    @property
    def exit_code(self) -> int | None:
        """The process's exit code once it has ended (negative: killed by that signal), else None."""
        return self.proc.poll() if self.proc is not None else None

    def log_size(self) -> int:
        """Bytes in the server log now (0 without one): mark it before a request, then
        `log_text(since=mark)` holds only what the server wrote about that request."""
        try:
            return self.log_path.stat().st_size if self.log_path else 0
        except OSError:
            return 0

    def log_text(self, since: int = 0) -> str:
        """The server log from byte offset `since` on ("" when there is no log)."""
        if self.log_path is None:
            return ""
        try:
            with open(self.log_path, "rb") as log:
                log.seek(since)
                return log.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def settings(self) -> ModelSettings:
        """ModelSettings pointing the client at this server."""
        return local_model_settings(self.base_url, model=self.model.alias, n_ctx=self.n_ctx)

    def start(self) -> "LocalServer":
        """Start the process and wait until it answers; returns self."""
        if self.proc is not None:
            return self
        self._dir = Path(tempfile.mkdtemp(prefix="ctxagent-local-"))
        with open(self._dir / "server.log", "wb") as log:
            self.proc = subprocess.Popen(
                self._command(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, env=_server_env(), cwd=self._dir,  # `-m` puts the cwd on sys.path
            )
        with _LIVE_LOCK:
            _LIVE.add(self)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _command(self) -> list[str]:
        cmd = [sys.executable, "-m", "ctxagent.llm.local.launcher", "--model", str(self.model.path),
               "--family", self.family, "--alias", self.model.alias, "--n-ctx", str(self.n_ctx),
               "--n-threads", str(self.n_threads), "--port", str(self.requested_port),
               "--port-file", str(self._dir / "port"), "--parent-pid", str(os.getpid()),
               "--max-calls", str(self.max_calls)]
        return cmd + ([] if self.call_first else ["--no-call-first"]) + ([] if self.no_repeat else ["--allow-repeats"])

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise self._failure(f"the offline model server exited with code {self.proc.returncode}")
            if self.port is None and (self._dir / "port").is_file():
                self.port = int((self._dir / "port").read_text(encoding="ascii"))
            if self.port is not None and _answers(self.base_url + "/models"):
                return
            time.sleep(0.1)
        raise self._failure(f"the offline model server did not answer within {self.startup_timeout_s:.0f} s")

    def _failure(self, what: str) -> LocalServerError:
        tail = log_tail(self.log_path) if self.log_path else ""
        return LocalServerError(
            f"{what} (model {self.model.path}). Server log, last lines:\n{tail}\n"
            "If it crashed at start-up, rebuild llama-cpp-python with "
            'CMAKE_ARGS="-DGGML_NATIVE=OFF" (see docs/local-model.md).'
        )

    def stop(self) -> None:
        """Terminate the process group, kill it after STOP_GRACE_S, remove the log. Idempotent."""
        proc, self.proc = self.proc, None
        if proc is not None:
            _end_group(proc)
        with _LIVE_LOCK:
            _LIVE.discard(self)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        self.port = None

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _end_group(proc: subprocess.Popen) -> None:
    for sig, wait_s in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, STOP_GRACE_S)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _server_env() -> dict[str, str]:
    """The server's environment: ours minus API keys and secrets (it needs none)."""
    secret = ("KEY", "TOKEN", "SECRET", "PASSWORD")
    return {k: v for k, v in os.environ.items() if not any(s in k.upper() for s in secret)}


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2.0) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


def log_tail(path: Path, max_lines: int = 20, max_chars: int = 3000) -> str:
    """The last `max_lines` lines of a log file (at most `max_chars`), or a note when unreadable."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"(no log: {exc})"
    return "\n".join(text.splitlines()[-max_lines:])[-max_chars:] or "(the log is empty)"


@atexit.register
def _stop_all() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for server in live:
        server.stop()
