"""Approved commands and python_exec through the tools, in process, with and without the
bubblewrap sandbox: timeout kills the whole group, the code file always goes, Ctrl-C kills
and reports, output is capped, and nothing runs when no checkpoint can be recorded."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from ctxagent.exec.gate import ExecPolicy
from ctxagent.exec.sandbox import bwrap_works
from ctxagent.tools.python_exec import PythonExecTool
from ctxagent.tools.terminal import TerminalTool

SANDBOXES = [pytest.param("off", id="no-sandbox"),
             pytest.param("required", id="bwrap", marks=pytest.mark.skipif(not bwrap_works(),
                                                                           reason="bubblewrap does not work here"))]


def policy(sandbox: str, **more) -> ExecPolicy:
    return ExecPolicy(mode="workspace-write", sandbox=sandbox, **{"timeout_s": 20.0, **more})


def terminal(ws: Path, sandbox: str, **more) -> TerminalTool:
    return TerminalTool(ws, exec_policy=policy(sandbox, **more), ask=lambda gate: True)


def python(ws: Path, sandbox: str, **more) -> PythonExecTool:
    return PythonExecTool(ws, exec_policy=policy(sandbox, **more), ask=lambda gate: True)


def alive(marker: str) -> bool:
    """Whether any process has `marker` in its command line."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


@pytest.fixture
def private_tmp(tmp_path, monkeypatch) -> Path:
    """Where the tools make their private directories, to see that they are removed."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(root))
    return root


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_timeout_kills_the_whole_process_group_and_keeps_the_output(tmp_path, sandbox) -> None:
    marker = f"{time.time_ns() % 10**6 + 100}.4321"
    result = terminal(tmp_path, sandbox, timeout_s=1.5).execute(
        {"command": f"echo started; sleep {marker} & sleep {marker}", "allow_dangerous": True})
    assert not result.ok and "TIMED OUT after 1.5 s" in result.content and "started" in result.content
    time.sleep(0.2)
    assert not alive(marker)


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_the_code_file_is_removed_after_a_run_and_a_timeout(tmp_path, private_tmp, sandbox) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    done = python(ws, sandbox).execute({"code": "print(__file__)"})
    assert done.ok and "snippet.py" in done.content
    slow = python(ws, sandbox, timeout_s=1.0).execute({"code": "import time\nprint(__file__, flush=True)\n"
                                                               "time.sleep(30)\n"})
    assert "TIMED OUT" in slow.content and "snippet.py" in slow.content
    assert list(private_tmp.iterdir()) == []


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_python_exec_output_printed_before_a_timeout_is_kept_without_flush(tmp_path, sandbox) -> None:
    slow = python(tmp_path, sandbox, timeout_s=1.0).execute({"code": "import time\nprint('step one done')\n"
                                                                    "time.sleep(30)\n"})
    assert "TIMED OUT" in slow.content and "step one done" in slow.content, slow.content


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_ctrl_c_kills_the_run_removes_the_code_and_reports(tmp_path, private_tmp, sandbox) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = f"{time.time_ns() % 10**6 + 100}.8765"
    code = f"import subprocess\nprint('begun', flush=True)\nsubprocess.run(['sleep', '{marker}'])\n"
    timer = threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt) as info:
        python(ws, sandbox).execute({"code": code})
    timer.cancel()
    assert "INTERRUPTED by the user" in info.value.report and "begun" in info.value.report
    assert list(private_tmp.iterdir()) == [] and not alive(marker)


def test_huge_binary_and_missing_output_get_clear_results(tmp_path) -> None:
    tool = terminal(tmp_path, "off", max_output_bytes=2000)
    huge = tool.execute({"command": "seq 1 100000", "allow_dangerous": True}).content
    assert huge.startswith("$ seq") and "\n1\n2\n" in huge and "100000" in huge and "bytes of output dropped" in huge
    assert len(huge) < 3000
    binary = tool.execute({"command": "head -c 5000 /dev/zero", "allow_dangerous": True}).content
    assert "(binary output, 5000 bytes, not shown)" in binary
    missing = tool.execute({"command": "no-such-program-xyz --x", "allow_dangerous": True})
    assert not missing.ok and "exit code 127 (command not found" in missing.content
    failing = tool.execute({"command": "sh -c 'echo oops >&2; exit 3'", "allow_dangerous": True})
    assert "exit code 3" in failing.content and "[stderr]\noops" in failing.content
    quiet = tool.execute({"command": "read x", "allow_dangerous": True})  # stdin is /dev/null: no hang
    assert "exit code" in quiet.content and "(no output)" in quiet.content


def test_nothing_runs_when_no_checkpoint_can_be_recorded(tmp_path) -> None:
    (tmp_path / ".ctxagent").mkdir()
    (tmp_path / ".ctxagent" / "checkpoints").write_text("not a folder")
    result = terminal(tmp_path, "off").execute({"command": "touch made.txt", "allow_dangerous": True})
    assert not result.ok and "checkpoint" in result.content and "nothing runs unrecorded" in result.content
    assert not (tmp_path / "made.txt").exists()


def test_the_model_sees_the_files_a_command_changed(tmp_path) -> None:
    (tmp_path / "old.txt").write_text("x")
    (tmp_path / "keep.txt").write_text("1")
    result = terminal(tmp_path, "off").execute(
        {"command": "rm old.txt && echo 2 > keep.txt && mkdir d && touch d/new.txt", "allow_dangerous": True})
    assert result.ok
    assert "[files] created: d/new.txt · deleted: old.txt · modified: keep.txt" in result.content
    assert result.data["files"] == {"created": ["d/new.txt"], "deleted": ["old.txt"], "modified": ["keep.txt"]}


@pytest.mark.skipif(not bwrap_works(), reason="bubblewrap does not work here")
def test_the_sandbox_keeps_the_rest_read_only_and_the_network_off(tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".ctxagent").mkdir()
    result = terminal(ws, "required").execute({"command": f"touch {outside}/x; touch .ctxagent/x; touch in.txt; "
                                                          "cat /proc/net/dev | grep -c :", "allow_dangerous": True})
    assert result.content.count("Read-only file system") == 2 and "created: in.txt" in result.content
    assert "[stdout]\n1" in result.content  # only the loopback interface
    assert not (outside / "x").exists()


def test_without_approval_nothing_runs(tmp_path) -> None:
    tool = TerminalTool(tmp_path, exec_policy=policy("off"))
    assert "needs the user's approval" in tool.execute({"command": "touch x", "allow_dangerous": True}).content
    read_only = TerminalTool(tmp_path, ask=lambda gate: True)
    assert "--mode workspace-write" in read_only.execute({"command": "touch x", "allow_dangerous": True}).content
    assert "--mode workspace-write" in PythonExecTool(tmp_path, ask=lambda g: True).execute({"code": "1"}).content
    assert not (tmp_path / "x").exists()
