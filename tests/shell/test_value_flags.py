"""Security findings S1 and S2 (issue 17) as a class: a flag's value kind must match how
the real program parses it. Where the scanner thinks a flag takes the next word but the
program does not, that word reaches the program unchecked (`head -100c FILE` read any
file; `git log --format --output=FILE` truncated any file).

The walks below run every value-taking flag of every allow-list against the programs
installed here, so a table that drifts from the program fails the suite."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ctxagent.shell.commands.git_specs import SUBCOMMANDS
from ctxagent.shell.specs import ATTACHED, PATH, SPECS, VALUE
from ctxagent.tools import TerminalTool
from tests.shell.helpers import make_workspace

SECRET = "TOP-SECRET-OUTSIDE-CONTENT"


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    ws = make_workspace(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    (ws / "lnk").symlink_to(outside / "secret.txt")
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A"], cwd=ws, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], cwd=ws, check=True)
    return ws


S1_REJECTED = [
    "head -100000c ../outside/secret.txt",
    "tail -100000c ../outside/secret.txt",
    "tail -100000c /etc/passwd",
    "tail -100c lnk",
    "head -5c lnk",
    "head -5lq lnk",
    "tail -5cf lnk",
    "head -2kc ../outside/secret.txt",
    "head -100n ../outside/secret.txt",  # n is not a suffix of the obsolete syntax: refused
    "tail -100s ../outside/secret.txt",
    "git log -5c",
    "git show -1n ../outside/secret.txt",
    "grep -2f ../outside/secret.txt README.md",  # getopt cluster: -f's value is a PATH
]


@pytest.mark.parametrize("command", S1_REJECTED)
def test_s1_numeric_clusters_never_reach_outside_files(ws, command):
    result = TerminalTool(workspace=ws, timeout=20).execute({"command": command})
    assert not result.ok, result.content
    assert SECRET not in result.content
    assert "root:" not in result.content


@pytest.mark.parametrize("command, expected", [
    ("head -3c a.txt", "b 2"),
    ("tail -1 a.txt", "a;b here"),
    ("head -2 README.md", "hello foo"),
    ("grep -1n TODO README.md", "3:TODO"),
    ("git log -1 --format=%s", "init"),
])
def test_s1_numeric_neighbours_still_run(ws, command, expected):
    result = TerminalTool(workspace=ws, timeout=20).execute({"command": command})
    assert result.ok, result.content
    assert expected in result.content


@pytest.mark.parametrize("command", [
    "git log --format --output=victim.txt",
    "git show --min-parents --output=victim.txt",
    "git log --max-parents --output=victim.txt",
    "git log --format --output=../outside/secret.txt",
    "git show --format --output=README.md",
])
def test_s2_attached_only_flags_do_not_swallow_the_next_word(ws, command):
    before = (ws / "README.md").read_bytes()
    result = TerminalTool(workspace=ws, timeout=20).execute({"command": command})
    assert not result.ok
    assert "--" in result.content
    assert not (ws / "victim.txt").exists()
    assert (ws / "README.md").read_bytes() == before
    assert (ws.parent / "outside" / "secret.txt").read_text() == SECRET + "\n"


@pytest.mark.parametrize("command, expected", [
    ("git log --format=%s", "init"),
    ("git show --min-parents=0 --format=%s --no-patch", "init"),
    ("git log --max-parents=1 --format=%s", "init"),
])
def test_s2_attached_values_still_work(ws, command, expected):
    result = TerminalTool(workspace=ws, timeout=20).execute({"command": command})
    assert result.ok, result.content
    assert expected in result.content


def _value_flags(spec) -> list[str]:
    return ([f"-{c}" for c, kind in spec.short.items() if kind in (VALUE, PATH)]
            + [name for name, kind in spec.long.items() if kind in (VALUE, PATH)])


_PROGRAM_FLAGS = [(cmd, flag) for cmd, spec in SPECS.items() if shutil.which(cmd) for flag in _value_flags(spec)]


@pytest.mark.parametrize("cmd, flag", _PROGRAM_FLAGS)
def test_every_value_flag_takes_the_next_word_in_the_real_program(tmp_path, cmd, flag):
    """`PROG FLAG --help`: a program that took --help as FLAG's value prints no usage."""
    proc = subprocess.run([cmd, flag, "--help"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=10, stdin=subprocess.DEVNULL)
    assert "usage" not in proc.stdout[:400].lower(), f"{cmd} {flag} does not take the next word"


def _git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"],
                   cwd=repo, check=True)
    return repo


_GIT_OUTPUT_SUBCOMMANDS = ("log", "show", "diff")
_GIT_FLAGS = [(sub, flag) for sub, spec in SUBCOMMANDS.items() for flag in _value_flags(spec)]
_GIT_ATTACHED = [(sub, name) for sub, spec in SUBCOMMANDS.items()
                 for name, kind in spec.long.items() if kind == ATTACHED]


@pytest.mark.skipif(not shutil.which("git"), reason="git is not installed")
@pytest.mark.parametrize("sub, flag", _GIT_FLAGS)
def test_every_git_value_flag_takes_the_next_word(tmp_path, sub, flag):
    """log/show/diff: `git SUB FLAG --output=PROBE` must not create PROBE; the others:
    `git SUB FLAG -h` must not print the usage (the flag took -h as its value)."""
    repo = _git_repo(tmp_path)
    probe = tmp_path / "probe"
    nxt = f"--output={probe}" if sub in _GIT_OUTPUT_SUBCOMMANDS else "-h"
    proc = subprocess.run(["git", sub, flag, nxt], cwd=repo, capture_output=True, text=True,
                          timeout=10, stdin=subprocess.DEVNULL)
    assert not probe.exists(), f"git {sub} {flag} does not take the next word: it opened --output"
    assert not proc.stdout.startswith("usage:"), f"git {sub} {flag} does not take the next word"


@pytest.mark.skipif(not shutil.which("git"), reason="git is not installed")
@pytest.mark.parametrize("sub, flag", _GIT_ATTACHED)
def test_git_attached_flags_really_are_attached_only(tmp_path, sub, flag):
    """The reason for ATTACHED: the real git opens the --output after a bare FLAG."""
    repo = _git_repo(tmp_path)
    probe = tmp_path / "probe"
    subprocess.run(["git", sub, flag, f"--output={probe}"], cwd=repo, capture_output=True,
                   timeout=10, stdin=subprocess.DEVNULL)
    assert probe.exists()
