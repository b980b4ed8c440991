"""SIGKILL mid-operation, shared by the checkpoint store and prune tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def kill_child_after(code: str, repo: Path, delay: float) -> None:
    """Run `code` (Python, argv[1] = `repo`) in a child; once it prints its first line, wait
    `delay` seconds and SIGKILL it, then reap it."""
    proc = subprocess.Popen([sys.executable, "-c", code, str(repo)], stdout=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    proc.stdout.readline()
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
