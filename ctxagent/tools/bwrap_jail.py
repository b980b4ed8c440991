"""An OS-level read-only jail for the terminal tool, with bubblewrap (`bwrap`).

Where bwrap is installed and works, every command of a pipeline runs inside
`bwrap --ro-bind / / --ro-bind WORKSPACE WORKSPACE --dev /dev --proc /proc
--unshare-net --unshare-pid --unshare-ipc --die-with-parent --bind SCRATCH SCRATCH`:
the whole file system (the workspace too) is read-only, there is no network, and only
the per-run scratch directory (HOME and TMPDIR, deleted afterwards) is writable. This is a
second wall behind the parsed allow-list, not a replacement for it.

bwrap often cannot run inside containers (no user namespaces, no mount permission);
`jail_available()` tries it once per process and the tool then falls back silently to
the allow-list alone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading

_lock = threading.Lock()
_available: bool | None = None


def jail_prefix(*, workspace: str, cwd: str, scratch: str) -> list[str]:
    """The bwrap argv to put before a program (ends with `--`). Needs `jail_available()`."""
    bwrap = shutil.which("bwrap") or "bwrap"
    args = [
        bwrap, "--ro-bind", "/", "/", "--ro-bind", workspace, workspace,
        "--dev", "/dev", "--proc", "/proc",
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent",
        "--bind", scratch, scratch, "--chdir", cwd,
    ]
    if os.geteuid() == 0:
        args += ["--cap-drop", "ALL"]
    return args + ["--"]


def jail_available() -> bool:
    """True when bwrap is installed and a trial run of the jail succeeds (cached)."""
    global _available
    with _lock:
        if _available is None:
            _available = _probe()
        return _available


def _probe() -> bool:
    true = shutil.which("true")
    if shutil.which("bwrap") is None or true is None:
        return False
    with tempfile.TemporaryDirectory(prefix="ctxagent-bwrap-") as scratch:
        argv = jail_prefix(workspace=scratch, cwd=scratch, scratch=scratch) + [true]
        try:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return False
    return proc.returncode == 0
