"""Resource limits of the terminal tool's processes, and the scratch-directory watchdog.

A "read-only" command can still exhaust the machine: `sed ':a;p;ba' f | sort` makes sort
spill gigabytes of temporary files into its TMPDIR, `awk 'BEGIN{s="x"; while(1) s=s s}'`
eats memory (breaker finding F3). `ResourceLimits` gives every process rlimits (set in
the child between fork and exec) and `ScratchWatch` measures the scratch directory
while the pipeline runs, so `process.run_pipeline` can stop it. In the bubblewrap jail
the scratch directory is also a tmpfs of `scratch_bytes` (bwrap_jail), a hard limit.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass
from typing import Callable

SCRATCH_POLL_S = 0.05
"""Seconds between two measurements of the scratch directory."""
MiB = 1 << 20


@dataclass(frozen=True)
class ResourceLimits:
    """Limits for every process of a pipeline (bytes); why each: docs/terminal.md, "How commands run".

    memory_bytes: RLIMIT_DATA of one process (heap and private writable memory, not file mappings).
    file_bytes: RLIMIT_FSIZE, the size of any one file a process writes (SIGXFSZ beyond). scratch_bytes: all
    files of the scratch directory together (the watchdog's bound, the jail's tmpfs size). RLIMIT_CORE is 0.
    """

    memory_bytes: int = 1024 * MiB
    file_bytes: int = 64 * MiB
    scratch_bytes: int = 256 * MiB

    def preexec(self) -> Callable[[], None]:
        """A function for Popen's preexec_fn that sets the rlimits in the child. It only
        calls setrlimit (no imports, no locks), which is safe between fork and exec."""
        wanted = ((resource.RLIMIT_DATA, self.memory_bytes), (resource.RLIMIT_FSIZE, self.file_bytes),
                  (resource.RLIMIT_CORE, 0))
        limits = [(which, _at_most_hard(which, value)) for which, value in wanted]

        def apply() -> None:
            for which, value in limits:
                resource.setrlimit(which, (value, value))
        return apply


def _at_most_hard(which: int, value: int) -> int:
    """`value`, lowered to the current hard limit (a process cannot raise it)."""
    hard = resource.getrlimit(which)[1]
    return value if hard == resource.RLIM_INFINITY else min(value, hard)


class ScratchWatch:
    """Measures a directory's disk usage at most every SCRATCH_POLL_S seconds.

    `check()` returns "" or why the pipeline must stop; `peak` is the largest usage
    seen (bytes of allocated blocks, so sparse files count what they really use)."""

    def __init__(self, path: str, limit: int) -> None:
        self.path, self.limit, self.peak = path, limit, 0
        self._next = 0.0

    def check(self) -> str:
        """"" while the directory holds at most `limit` bytes, else the reason to stop."""
        now = time.monotonic()
        if now < self._next:
            return ""
        self._next = now + SCRATCH_POLL_S
        used = disk_usage(self.path)
        self.peak = max(self.peak, used)
        if used <= self.limit:
            return ""
        return (f"it wrote more than {_size(self.limit)} of temporary files to its scratch directory "
                f"(sort spills there when its input is large)")


def disk_usage(path: str) -> int:
    """Bytes of disk blocks used by the files under `path` (0 if it is gone)."""
    total = 0
    try:
        entries = list(os.scandir(path))
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                total += disk_usage(entry.path)
            else:
                total += entry.stat(follow_symlinks=False).st_blocks * 512
        except OSError:
            continue
    return total


def _size(n: int) -> str:
    return f"{n // MiB} MiB" if n >= MiB and n % MiB == 0 else f"{n} bytes"
