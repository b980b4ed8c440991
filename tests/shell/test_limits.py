"""Finding F3 of the break test as a class: a "read-only" command must
not exhaust the machine's disk or memory. `sed ':a;p;ba' big.txt | sort` spilled ~20 GB
of sort's temporary files in 30 s; awk can eat all memory. Every process gets rlimits
(memory, file size, no core), the scratch directory is watched (and is a tmpfs of the
limit's size in the jail). Assertions are on bytes and outcomes, never on time."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from ctxagent.shell.jail import jail_available, jail_prefix
from ctxagent.shell.limits import MiB, ResourceLimits, ScratchWatch, disk_usage
from ctxagent.shell.process import run_pipeline, safe_env
from ctxagent.tools import TerminalTool
from tests.shell.helpers import make_workspace

SANDBOX_MODES = [False] + ([None] if jail_available() else [])
needs_jail = pytest.mark.skipif(not jail_available(), reason="bubblewrap does not work here")
SMALL = ResourceLimits(memory_bytes=256 * MiB, file_bytes=64 * MiB, scratch_bytes=16 * MiB)
RUNAWAY_SORT = 'sed ":a;p;ba" big.txt | sort'


class PeakUsage:
    """Polls the disk usage of a directory in a thread; `peak` is the most seen (bytes)."""

    def __init__(self, path: Path) -> None:
        self.path, self.peak, self._stop = path, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, disk_usage(str(self.path)))
            time.sleep(0.005)

    def __enter__(self) -> "PeakUsage":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace with the breaker's big.txt; the tool's run directories go under
    tmp_path/runs so the test can measure them."""
    ws = make_workspace(tmp_path)
    (ws / "big.txt").write_text("é" * 200_000 + "\n")
    (tmp_path / "runs").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "runs"))
    return ws


def test_F3_runaway_sort_is_stopped_with_scratch_usage_bounded(ws):
    tool = TerminalTool(workspace=ws, timeout=120, sandbox=False, limits=SMALL)
    with PeakUsage(ws.parent / "runs") as usage:
        result = tool.execute({"command": RUNAWAY_SORT})
    assert "timed out" not in result.content
    stopped = "was stopped: it wrote more than 16 MiB of temporary files to its scratch directory"
    too_big = "SIGXFSZ: a file it wrote reached the size limit"  # if one spill file outran the watchdog
    assert (not result.ok and stopped in result.content) or too_big in result.content, result.content
    assert usage.peak <= SMALL.scratch_bytes + SMALL.file_bytes  # the breaker saw 20 GB
    assert list((ws.parent / "runs").iterdir()) == []  # the scratch directory is gone


@needs_jail
def test_F3_in_the_jail_the_scratch_directory_is_a_tmpfs_of_the_limit(ws):
    tool = TerminalTool(workspace=ws, timeout=120, sandbox=True, limits=SMALL)
    with PeakUsage(ws.parent / "runs") as usage:
        result = tool.execute({"command": RUNAWAY_SORT})
    assert "No space left on device" in result.content, result.content
    assert "[the scratch directory (TMPDIR) holds at most 16 MiB]" in result.content
    assert "timed out" not in result.content
    assert usage.peak < MiB  # nothing reached the real disk


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
def test_F3_a_file_past_the_size_limit_kills_its_writer(ws, sandbox):
    limits = ResourceLimits(memory_bytes=256 * MiB, file_bytes=4 * MiB, scratch_bytes=64 * MiB)
    tool = TerminalTool(workspace=ws, timeout=120, sandbox=sandbox, limits=limits)
    result = tool.execute({"command": RUNAWAY_SORT})
    assert result.ok and "[killed by signal 25 (SIGXFSZ: a file it wrote reached the size limit)" in result.content


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
@pytest.mark.parametrize("program", [
    'BEGIN { s = "x"; while (1) s = s s }',
    'BEGIN { while (1) a[i++] = i }',
    '{ while (1) $0 = $0 $0 }',
])
def test_F3_a_memory_hog_runs_out_of_memory_not_out_of_time(ws, sandbox, program):
    limits = ResourceLimits(memory_bytes=64 * MiB)
    tool = TerminalTool(workspace=ws, timeout=120, sandbox=sandbox, limits=limits)
    result = tool.execute({"command": f"awk '{program}' a.txt"})
    assert result.ok, result.content  # it ended by itself: no timeout
    assert "out of memory" in result.content or "Cannot allocate memory" in result.content, result.content


def _limits_seen(tmp_path: Path, prefix: list[str] | None) -> dict[str, str]:
    env = safe_env(home=str(tmp_path), cwd=str(tmp_path))
    result = run_pipeline([["cat", "/proc/self/limits"]], cwd=str(tmp_path), env=env, timeout=20,
                          max_output=10000, prefix=prefix, limits=SMALL)
    rows = {}
    for line in result.stdout.splitlines()[1:]:
        name, soft = line[:26].strip(), line[26:].split()[0]
        rows[name] = soft
    return rows


@pytest.mark.parametrize("jailed", [False, True] if jail_available() else [False])
def test_F3_every_process_gets_the_rlimits(tmp_path, jailed):
    prefix = jail_prefix(workspace=str(tmp_path), cwd=str(tmp_path), scratch=str(tmp_path)) if jailed else None
    rows = _limits_seen(tmp_path, prefix)
    assert rows["Max data size"] == str(SMALL.memory_bytes)
    assert rows["Max file size"] == str(SMALL.file_bytes)
    assert rows["Max core file size"] == "0"


def test_F3_the_watchdog_counts_allocated_bytes(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "full").write_bytes(b"x" * (2 * MiB))
    with open(tmp_path / "sparse", "wb") as f:
        f.truncate(1 << 30)  # a 1 GiB hole uses no disk
    watch = ScratchWatch(str(tmp_path), limit=MiB)
    assert "more than 1 MiB" in watch.check()
    assert 2 * MiB <= watch.peak < 3 * MiB
    assert ScratchWatch(str(tmp_path), limit=4 * MiB).check() == ""
    assert disk_usage(str(tmp_path / "missing")) == 0


def test_F3_limits_above_the_hard_limit_are_lowered_to_it(tmp_path):
    """A process cannot raise its hard limit: ask for more and the command still runs."""
    code = (
        "import resource, sys\n"
        "from ctxagent.shell.process import run_pipeline, safe_env\n"
        "from ctxagent.shell.limits import ResourceLimits\n"
        "resource.setrlimit(resource.RLIMIT_DATA, (8 << 30, 8 << 30))\n"
        "env = safe_env(home=sys.argv[1], cwd=sys.argv[1])\n"
        "r = run_pipeline([['cat', '/proc/self/limits']], cwd=sys.argv[1], env=env, timeout=20,\n"
        "                 max_output=10000, limits=ResourceLimits(memory_bytes=1 << 62))\n"
        "print(r.stdout)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"Max data size             {8 << 30}" in proc.stdout


def test_F3_everyday_commands_work_under_the_default_limits(ws):
    (ws / "lines.txt").write_text("".join(f"{i % 977} line {i}\n" for i in range(200_000)))
    tool = TerminalTool(workspace=ws, timeout=60)
    assert tool.run({"command": "sort -n lines.txt | tail -1"}).startswith("976 ")
    assert tool.run({"command": "grep -c line lines.txt"}) == "200000"
    assert tool.run({"command": "awk '{n[$1]++} END {print length(n)}' lines.txt"}) == "977"
    assert os.path.exists(ws / "lines.txt")
