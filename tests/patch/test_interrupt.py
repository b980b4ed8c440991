"""Issue 17, S5: Ctrl-C (a real SIGINT) during the writes of a multi-file patch restores
every file and says so truthfully ("partially applied (k of n files written), restored",
"not applied", or "applied" when it came after the last write); a second Ctrl-C does not
cut the rollback in two; a killed run leaves no temporary file, not even in .ctxagent/."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ctxagent.patch.apply import PatchInterrupted, apply_patch_text
from ctxagent.storage.journal import interrupts_deferred

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from patch_sigkill import NEW, OLD, make_repo  # noqa: E402  (the SIGKILL harness's repository)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
FILES = 40


def _repo(root: Path) -> str:
    return make_repo(root, FILES)


def _tree(root: Path) -> str:
    """old | new | mixed; and nothing half-done is left (temporary files, a journal)."""
    texts = {(root / f"f{i:02d}.py").read_text() for i in range(FILES)}
    assert not [p for p in root.rglob("*") if p.name.startswith(".ctxtmp-")]
    assert not (root / ".ctxagent" / "journal").exists()
    return "new" if texts == {NEW} else "old" if texts == {OLD} else "mixed"


def _interrupt_when_written(path: Path, pid: int, sig: int = signal.SIGINT) -> threading.Thread:
    """A thread that sends `sig` to `pid` as soon as `path` holds the new text."""
    def watch() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if path.read_text() == NEW:
                    break
            except OSError:
                pass
            time.sleep(0.0002)
        os.kill(pid, sig)
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_s5_ctrl_c_during_the_writes_restores_every_file_and_says_partially_applied(tmp_path: Path) -> None:
    reports = []
    for attempt in range(8):
        repo = tmp_path / f"r{attempt}"
        patch = _repo(repo)
        watcher = _interrupt_when_written(repo / "f00.py", os.getpid())
        try:
            apply_patch_text(patch, repo, max_files=FILES)
            state, report = _tree(repo), "applied"
            time.sleep(0.5)  # the signal may still be on its way
        except PatchInterrupted as exc:
            state, report = _tree(repo), exc.report
        except KeyboardInterrupt:  # arrived after apply_patch_text returned
            state, report = _tree(repo), "applied"
        watcher.join()
        if "partially applied" in report:
            assert state == "old" and "restored: every file was restored" in report, report
            assert f"of {FILES} files written" in report
        elif "not applied" in report:
            assert state == "old", report
        else:
            assert state == "new", report
        reports.append(report)
        if "partially applied" in report:
            break
    assert any("partially applied" in r for r in reports), reports


def test_s5_a_second_ctrl_c_waits_for_the_rollback() -> None:
    with interrupts_deferred() as got:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # a KeyboardInterrupt would be raised here without the deferral
    assert got == [signal.SIGINT]
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C works again after the block
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)


def test_s5_ctxagent_apply_sent_sigint_leaves_a_whole_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (tmp_path / "fix.patch").write_text(_repo(repo))
    (tmp_path / "home").mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home"), "PYTHONPATH": os.environ.get(
        "PYTHONPATH", str(Path(__file__).resolve().parents[2]))}
    proc = subprocess.Popen([sys.executable, "-m", "ctxagent.cli.main", "apply", "--repo", str(repo), "--yes",
                             str(tmp_path / "fix.patch")], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    watcher = _interrupt_when_written(repo / "f00.py", proc.pid)
    out, err = proc.communicate(timeout=60)
    watcher.join()
    state = _tree(repo)
    if proc.returncode == 0:
        assert state == "new", (out, err)
    else:
        assert state == "old", (proc.returncode, out, err)
        assert "interrupted" in err
