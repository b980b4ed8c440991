"""`python -m ctxagent.batch.worker_main`: one local pool worker process.

Reads one JSON request a line on stdin ({"task", "options"}), answers on stdout with
{"event": "started", "id", "pid"} then {"event": "result", "result"}; anything else the
agent prints goes to stderr (the worker's log). It ends at end of input, and when the
driver dies (Linux: PR_SET_PDEATHSIG; elsewhere its parent is polled), removing the
working copy in flight on the way out.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from typing import Any, TextIO


def main() -> int:
    """Serve requests until end of input; exit code 0."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # a stray print must not corrupt the protocol
    _follow_parent(int(os.environ.get("CTXAGENT_BATCH_DRIVER", "0")) or os.getppid())
    from ctxagent.batch.worker import run_task

    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            _send(channel, {"event": "started", "id": request["task"]["id"], "pid": os.getpid()})
            _send(channel, {"event": "result", "result": run_task(request["task"], request["options"])})
    except KeyboardInterrupt:
        return 130
    return 0


def _send(channel: TextIO, message: dict[str, Any]) -> None:
    channel.write(json.dumps(message) + "\n")
    channel.flush()


def _follow_parent(driver: int) -> None:
    """Exit (SystemExit: `finally` blocks run, the working copy is removed) once `driver` is gone."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if sys.platform == "linux":
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):
            pass
    if os.getppid() != driver:  # it died before prctl took effect
        sys.exit(143)

    def watch() -> None:
        while not threading.Event().wait(2.0):
            if os.getppid() != driver:
                os.kill(os.getpid(), signal.SIGTERM)
                return

    threading.Thread(target=watch, daemon=True, name="driver-watch").start()


if __name__ == "__main__":
    sys.exit(main())
