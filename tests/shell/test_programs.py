"""Issue 17 S4 / issue 10: helper programs are never looked up on the user's PATH;
ripgrep comes from ctxagent's own environment even when it is not activated."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ctxagent.fetch.files import find_rg as fetch_find_rg
from ctxagent.shell import jail
from ctxagent.shell.process import SAFE_PATH, resolve_program
from ctxagent.shell.programs import find_program, find_rg, own_bin_dirs
from ctxagent.tools import TerminalTool
from tests.shell.helpers import make_workspace

HELPERS = ["bwrap", "true", "rg", "cat", "git", "sed", "sort", "ls"]


def _plant(ws: Path, marker: Path) -> list[str]:
    """Fake helpers in the repository (node_modules/.bin, .venv/bin) that leave `marker`."""
    dirs = [ws / "node_modules" / ".bin", ws / ".venv" / "bin"]
    for d in dirs:
        d.mkdir(parents=True)
        for name in HELPERS:
            fake = d / name
            fake.write_text(f"#!/bin/sh\necho ran >> {marker}\necho FAKE-{name}\n")
            fake.chmod(0o755)
    return [str(d) for d in dirs]


@pytest.fixture
def hostile_path(tmp_path, monkeypatch):
    ws = make_workspace(tmp_path)
    marker = tmp_path / "ran"
    dirs = _plant(ws, marker)
    monkeypatch.setenv("PATH", os.pathsep.join([*dirs, os.environ.get("PATH", "")]))
    monkeypatch.chdir(ws)
    return ws, marker


@pytest.mark.parametrize("name", HELPERS)
def test_s4_helper_lookup_ignores_the_user_path(hostile_path, name):
    ws, _ = hostile_path
    found = find_program(name)
    if found is not None:
        assert not found.startswith(str(ws))
        assert os.path.dirname(found) in [*SAFE_PATH.split(os.pathsep), *own_bin_dirs()]


def test_s4_relative_or_absolute_names_are_not_programs(hostile_path):
    assert find_program("./node_modules/.bin/rg") is None
    assert find_program("/bin/sh") is None


def test_s4_jail_probe_and_prefix_never_use_the_repository_bwrap(hostile_path):
    ws, marker = hostile_path
    prefix = jail.jail_prefix(workspace=str(ws), cwd=str(ws), scratch=str(ws.parent))
    assert not prefix[0].startswith(str(ws))
    jail._probe()
    assert not marker.exists()


@pytest.mark.parametrize("sandbox", [False, None])
@pytest.mark.parametrize("command", ["rg -n TODO src", "cat a.txt | sort", "ls src", "git status"])
def test_s4_terminal_never_runs_a_program_the_repository_ships(hostile_path, sandbox, command):
    ws, marker = hostile_path
    if sandbox is None and not jail.jail_available():
        pytest.skip("bubblewrap jail not available")
    content = TerminalTool(workspace=ws, timeout=10, sandbox=sandbox).execute({"command": command}).content
    assert "FAKE-" not in content
    assert not marker.exists()


def test_issue10_rg_found_in_own_environment_not_activated(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    own = [d for d in own_bin_dirs() if os.path.exists(os.path.join(d, "rg"))]
    if not own:
        pytest.skip("the ripgrep wheel is not installed in this environment")
    assert find_rg() == os.path.join(own[0], "rg")
    assert fetch_find_rg() == find_rg() == resolve_program("rg")
    assert os.path.dirname(sys.executable) in own_bin_dirs()


@pytest.mark.parametrize("sandbox", [False, None])
def test_issue10_terminal_runs_rg_of_own_environment(tmp_path, monkeypatch, sandbox):
    if find_rg() is None:
        pytest.skip("ripgrep not installed")
    if sandbox is None and not jail.jail_available():
        pytest.skip("bubblewrap jail not available")
    monkeypatch.setenv("PATH", "/nonexistent")
    ws = make_workspace(tmp_path)
    content = TerminalTool(workspace=ws, timeout=10, sandbox=sandbox).execute({"command": "rg -n TODO src"}).content
    assert "2:" in content and "TODO: more" in content
