"""The bubblewrap jail shows only the system directories and the workspace, read-only, so
a program that opens a file outside the workspace on its own (a flag or a configuration
file we did not know about, an ignore file in a parent directory) finds nothing there:
the second wall behind the flag allow-lists of finding F1."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctxagent.shell.jail import SYSTEM_DIRS, jail_available, jail_prefix, outside_system_dirs
from ctxagent.shell.process import run_pipeline, safe_env
from ctxagent.tools import TerminalTool
from tests.shell.helpers import make_workspace

pytestmark = pytest.mark.skipif(not jail_available(), reason="bubblewrap does not work here")
LEAK = "sk-OUTSIDE[LEAKED"


def _run_jailed(tmp_path: Path, script: str, *, stdout_only: bool = False) -> str:
    ws, scratch = tmp_path / "ws", tmp_path / "scratch"
    if not ws.exists():
        make_workspace(tmp_path)
        scratch.mkdir()
    prefix = jail_prefix(workspace=str(ws), cwd=str(ws), scratch=str(scratch), scratch_bytes=1 << 20)
    env = safe_env(home=str(scratch), cwd=str(ws))
    result = run_pipeline([["sh", "-c", script]], cwd=str(ws), env=env, timeout=20, max_output=20000, prefix=prefix)
    return result.stdout if stdout_only else result.stdout + result.stderr


def test_F1_files_outside_the_workspace_are_not_there(tmp_path):
    (tmp_path / "secret.txt").write_text(LEAK)
    out = _run_jailed(tmp_path, f"cat {tmp_path}/secret.txt; ls /root /home")
    assert LEAK not in out and out.count("No such file or directory") == 3
    assert _run_jailed(tmp_path, f"ls -A {tmp_path}", stdout_only=True).split() == ["scratch", "ws"]
    top = set(_run_jailed(tmp_path, "ls -A /", stdout_only=True).split())
    assert top <= {*(d.strip("/") for d in SYSTEM_DIRS), "dev", "proc", tmp_path.parts[1]}, top


def test_F1_the_workspace_is_read_only_and_the_scratch_writable(tmp_path):
    out = _run_jailed(tmp_path, f"cat README.md; touch x; touch /y; touch {tmp_path}/scratch/z && echo scratch-ok")
    assert "hello foo" in out and "scratch-ok" in out
    assert out.count("Read-only file system") == 2
    assert not (tmp_path / "ws" / "x").exists()


@pytest.mark.skipif(shutil.which("rg") is None, reason="rg is not installed")
def test_F1_rg_does_not_read_ignore_files_above_the_workspace(tmp_path):
    """ripgrep reads .ignore/.rgignore/.gitignore of parent directories (even with
    --no-ignore-parent) and prints an invalid line in its error message."""
    ws = make_workspace(tmp_path)
    for name in (".ignore", ".rgignore", ".gitignore"):
        (tmp_path / name).write_text(f"{LEAK}{{\n")
    content = TerminalTool(workspace=ws, timeout=20, sandbox=True).run({"command": "rg -n hello"})
    assert "README.md:2:hello foo" in content and LEAK not in content


def test_programs_outside_the_system_directories_are_shown(tmp_path):
    assert not outside_system_dirs("/usr/bin/env")
    assert outside_system_dirs(str(tmp_path))
    prefix = jail_prefix(workspace=str(tmp_path), cwd=str(tmp_path), scratch=str(tmp_path),
                         extra_ro=["/nonexistent-but-listed"])
    assert prefix[prefix.index("/nonexistent-but-listed") - 1] == "--ro-bind"
