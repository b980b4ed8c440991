"""Issue 17 S9 as a class: rg follows a symbolic link to an ignore file (`.gitignore`,
`.ignore`, `.rgignore`, `.git/info/exclude`, also in a parent directory) and prints the
lines it cannot parse. The terminal runs rg with that class of ignore file switched off
and says so, with and without the jail; ignore files that are regular files inside the
workspace keep working; a FIFO or /dev/zero never blocks it. git itself does not follow
in-tree `.gitignore` links (git >= 2.32), which is checked too."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ctxagent.shell.ignore_files import risky_ignore_classes
from ctxagent.shell.jail import jail_available
from ctxagent.shell.programs import find_rg
from ctxagent.tools import TerminalTool

RG = find_rg()
pytestmark = pytest.mark.skipif(RG is None, reason="rg is not installed")
SANDBOX_MODES = [False] + ([None] if jail_available() else [])
LEAK = "S9-LEAKED-LINE"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
FLAG = {".gitignore": "--no-ignore-vcs", ".ignore": "--no-ignore-dot", ".rgignore": "--no-ignore-dot"}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """ws/sub/f.txt and ws/junk.log (hidden by ws/.gitignore), ws/.hidden/h.txt; an
    outside secret whose lines rg cannot parse as globs."""
    (tmp_path / "secret.txt").write_text(f"{LEAK}{{\n[{LEAK}\n")
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / ".hidden").mkdir()
    (ws / "sub" / "f.txt").write_text("hello\n")
    (ws / ".hidden" / "h.txt").write_text("hello hidden\n")
    (ws / "junk.log").write_text("hello junk\n")
    (ws / ".gitignore").write_text("*.log\n")
    return ws


def _make(path: Path, kind: str, secret: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    if kind == "outside link":
        path.symlink_to(secret)
    elif kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "link to a fifo inside":
        os.mkfifo(path.parent / "pipe")
        path.symlink_to("pipe")


def _run(ws: Path, command: str, sandbox) -> str:
    started = time.monotonic()
    result = TerminalTool(workspace=ws, timeout=15, sandbox=sandbox).execute({"command": command})
    assert result.ok, result.content
    assert time.monotonic() - started < 10, "rg blocked on an ignore file"
    assert LEAK not in result.content, result.content
    return result.content


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
@pytest.mark.parametrize("kind", ["outside link", "link to /dev/zero", "fifo", "link to a fifo inside"])
@pytest.mark.parametrize("name", [".gitignore", ".ignore", ".rgignore", "sub/.gitignore", "sub/deep/.ignore"])
def test_s9_rg_never_reads_an_ignore_file_it_must_not(ws, name, kind, sandbox):
    _make(ws / name, kind, ws.parent / "secret.txt")
    content = _run(ws, "rg -n hello", sandbox)
    assert "sub/f.txt:1:hello" in content
    assert f"[rg ran with {FLAG[os.path.basename(name)]}: {name}" in content, content
    assert str(ws.parent / "secret.txt") not in content


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
@pytest.mark.parametrize("command", ["rg hello sub", "rg hello sub/f.txt", "rg --files", "rg -l -e hello .",
                                     "cat sub/f.txt | rg hello", "rg -c hello sub/../sub"])
def test_s9_every_way_of_naming_the_search_is_checked(ws, command, sandbox):
    _make(ws / "sub" / ".rgignore", "outside link", ws.parent / "secret.txt")
    content = _run(ws, command, sandbox)
    assert "[rg ran with --no-ignore-dot: sub/.rgignore leads outside the workspace" in content, content


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
def test_s9_searching_from_a_subdirectory_checks_the_parents_in_the_workspace(ws, sandbox):
    _make(ws / ".ignore", "outside link", ws.parent / "secret.txt")
    tool = TerminalTool(workspace=ws, timeout=15, sandbox=sandbox)
    tool.run({"command": "cd sub"})
    content = tool.run({"command": "rg hello"})
    assert "f.txt:hello" in content and "--no-ignore-dot: .ignore leads outside" in content and LEAK not in content


@needs_git
@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
@pytest.mark.parametrize("kind", ["outside link", "fifo"])
def test_s9_the_exclude_file_of_the_repository(ws, kind, sandbox):
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    _make(ws / ".git" / "info" / "exclude", kind, ws.parent / "secret.txt")
    content = _run(ws, "rg hello", sandbox)
    assert "sub/f.txt:hello" in content and "junk.log" not in content  # .gitignore still counts
    assert "[rg ran with --no-ignore-exclude: .git/info/exclude" in content, content


@needs_git
@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
def test_s9_a_linked_git_directory_counts_as_its_exclude_file(ws, sandbox):
    other = ws.parent / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    (other / ".git" / "info" / "exclude").write_text(f"{LEAK}{{\n")
    (ws / ".git").symlink_to(other / ".git")
    content = _run(ws, "rg hello", sandbox)
    assert "--no-ignore-exclude: .git/info/exclude leads outside the workspace" in content, content


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
def test_s9_ignore_files_above_the_workspace_are_not_read(ws, sandbox):
    """rg reads them even with --no-ignore-parent (ripgrep 14): this was a known gap
    without the jail."""
    for name in (".ignore", ".rgignore", ".gitignore"):
        (ws.parent / name).write_text(f"{LEAK}{{\n")
    content = _run(ws, "rg --no-ignore-parent hello", sandbox)
    assert "a .ignore above the workspace" in content or "a .rgignore above the workspace" in content
    assert "a .gitignore above the workspace" in content and str(ws.parent) not in content


def test_s9_plain_rg_does_print_the_outside_file(ws):
    _make(ws / "sub" / ".gitignore", "outside link", ws.parent / "secret.txt")
    proc = subprocess.run([RG, "hello"], cwd=ws, capture_output=True, text=True, env={"HOME": str(ws)})
    assert LEAK in proc.stderr


@needs_git
@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
def test_s9_regular_ignore_files_and_links_inside_keep_working(ws, sandbox):
    subprocess.run(["git", "init", "-q", str(ws)], check=True)  # rg reads .gitignore in a repository only
    (ws / "conf").mkdir()
    (ws / "conf" / "ignore").write_text("f.txt\n")
    (ws / "sub" / ".ignore").symlink_to("../conf/ignore")
    content = _run(ws, "rg hello", sandbox)
    assert "rg ran with" not in content, content
    assert "junk.log" not in content and "sub/f.txt" not in content  # both ignore files applied
    assert "f.txt" not in _run(ws, "rg --files sub", sandbox)


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
def test_s9_flags_the_model_gave_are_respected(ws, sandbox):
    _make(ws / "sub" / ".gitignore", "outside link", ws.parent / "secret.txt")
    for command in ("rg --no-ignore-vcs hello", "rg -u hello", "rg --no-ignore hello"):
        assert "rg ran with" not in _run(ws, command, sandbox)
    _make(ws / "sub" / ".ignore", "fifo", ws.parent / "secret.txt")
    content = _run(ws, "rg --no-ignore-vcs hello", sandbox)
    assert "--no-ignore-dot" in content and "--no-ignore-vcs:" not in content


@pytest.mark.parametrize("sandbox", SANDBOX_MODES)
def test_s9_hidden_directories_count_only_when_rg_enters_them(ws, sandbox):
    _make(ws / ".hidden" / ".gitignore", "outside link", ws.parent / "secret.txt")
    assert "rg ran with" not in _run(ws, "rg hello", sandbox)
    for command in ("rg --hidden hello", "rg -. hello"):
        content = _run(ws, command, sandbox)
        assert ".hidden/h.txt" in content and "--no-ignore-vcs: .hidden/.gitignore" in content, content


def test_s9_a_file_replaced_by_a_link_after_a_first_search_is_seen(ws):
    """Listings are cached per directory: the cache must notice the change."""
    tool = TerminalTool(workspace=ws, timeout=15, sandbox=False)
    (ws / "sub" / ".gitignore").write_text("nothing\n")
    assert "rg ran with" not in tool.run({"command": "rg hello"})
    _make(ws / "sub" / ".gitignore", "outside link", ws.parent / "secret.txt")
    assert "--no-ignore-vcs: sub/.gitignore" in tool.run({"command": "rg hello"})
    (ws / "sub" / ".gitignore").unlink()
    assert "rg ran with" not in tool.run({"command": "rg hello"})


@needs_git
def test_s9_linked_worktrees_need_no_flag(tmp_path):
    main = tmp_path / "main"
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": str(tmp_path)}
    subprocess.run(["git", "init", "-q", str(main)], check=True, env=env)
    (main / "f.txt").write_text("hello\n")
    subprocess.run(["git", "-C", str(main), "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", str(main), "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "x"],
                   check=True, env=env)
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(tmp_path / "wt")], check=True, env=env)
    ws = str(tmp_path / "wt")
    assert risky_ignore_classes([ws], ws, hidden=False) == {}
    (main / ".git" / "info" / "exclude").write_text("*.txt\n")
    assert set(risky_ignore_classes([ws], ws, hidden=False)) == {"exclude"}


def test_s9_git_does_not_follow_in_tree_gitignore_links(ws):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    _make(ws / "sub" / ".gitignore", "outside link", ws.parent / "secret.txt")
    tool = TerminalTool(workspace=ws, timeout=15, sandbox=False)
    for command in ("git status --short", "git ls-files --others --exclude-standard", "git status --ignored"):
        content = tool.run({"command": command})
        assert LEAK not in content and "sub/" in content, content


def test_s9_tree_gitignore_is_refused(ws):
    """tree reads every .gitignore itself, following links; it is not checked, so refused."""
    result = TerminalTool(workspace=ws, timeout=15, sandbox=False).execute({"command": "tree --gitignore"})
    assert not result.ok and "--gitignore" in result.content and "not allowed" in result.content


def test_s9_hidden_search_enters_the_git_directory_too(ws):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    _make(ws / ".git" / "logs" / ".ignore", "outside link", ws.parent / "secret.txt")
    assert "rg ran with" not in _run(ws, "rg hello", False)
    assert "--no-ignore-dot: .git/logs/.ignore" in _run(ws, "rg --hidden hello", False)
