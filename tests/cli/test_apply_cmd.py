"""`ctxagent apply PATCH_FILE [--repo PATH] [--yes]`."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from ctxagent.cli import apply_cmd
from ctxagent.cli.main import cli, register_commands

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.txt").write_text("old\n")
    (tmp_path / "fix.patch").write_text(PATCH)
    return root


def invoke(args: list[str], **kw):
    return CliRunner().invoke(register_commands(cli), args, **kw)


def test_register_adds_apply_to_any_group() -> None:
    group = click.Group("g")
    apply_cmd.register(group)
    assert "apply" in group.commands


def test_yes_applies_and_exits_0(repo: Path) -> None:
    result = invoke(["apply", str(repo.parent / "fix.patch"), "--repo", str(repo), "--yes"])
    assert result.exit_code == 0, result.output
    assert (repo / "a.txt").read_text() == "new\n"
    assert "-old" in result.output and "+new" in result.output and "M a.txt (+1 -1)" in result.output
    assert "Checkpoint 1 recorded" in result.output and "ctxagent undo" in result.output


def test_without_tty_and_without_yes_refuses_and_changes_nothing(repo: Path) -> None:
    result = invoke(["apply", str(repo.parent / "fix.patch"), "--repo", str(repo)], input="y\n")
    assert result.exit_code == 1
    assert "stdin is not a terminal" in result.output and "--yes" in result.output
    assert (repo / "a.txt").read_text() == "old\n"


def test_bad_patch_exits_1_with_the_reason(repo: Path) -> None:
    (repo.parent / "bad.patch").write_text(PATCH.replace("-old", "-missing"))
    result = invoke(["apply", str(repo.parent / "bad.patch"), "--repo", str(repo), "--yes"])
    assert result.exit_code == 1
    assert "hunk 1 was not found in a.txt" in result.output and "1 | old" in result.output
    assert (repo / "a.txt").read_text() == "old\n"


def test_escape_exits_1(repo: Path) -> None:
    (repo.parent / "esc.patch").write_text("*** Begin Patch\n*** Add File: ../x.txt\n+x\n*** End Patch\n")
    result = invoke(["apply", str(repo.parent / "esc.patch"), "--repo", str(repo), "--yes"])
    assert result.exit_code == 1 and "refused path" in result.output
    assert not (repo.parent / "x.txt").exists()


def test_missing_patch_file_exits_1(repo: Path) -> None:
    result = invoke(["apply", str(repo / "nope.patch"), "--repo", str(repo), "--yes"])
    assert result.exit_code == 1 and "cannot read patch file" in result.output


def test_stdin_patch_needs_yes(repo: Path) -> None:
    result = invoke(["apply", "-", "--repo", str(repo)], input=PATCH)
    assert result.exit_code == 1 and "pass --yes" in result.output
    result = invoke(["apply", "-", "--repo", str(repo), "--yes"], input=PATCH)
    assert result.exit_code == 0 and (repo / "a.txt").read_text() == "new\n"


def _run_in_pty(repo: Path, answer: bytes) -> tuple[int, str]:
    """Run the real CLI with a terminal as stdin and type `answer` at the prompt."""
    master, slave = pty.openpty()
    code = "from ctxagent.cli.main import main; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "apply", str(repo.parent / "fix.patch"), "--repo", str(repo)],
        stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=os.environ.copy(),
    )
    os.close(slave)
    os.write(master, answer)
    out, _ = proc.communicate(timeout=60)
    os.close(master)
    return proc.returncode, out.decode()


@pytest.mark.parametrize("answer, code, content", [(b"y\n", 0, "new\n"), (b"n\n", 1, "old\n")])
def test_terminal_prompt_yes_and_no(repo: Path, answer: bytes, code: int, content: str) -> None:
    returncode, output = _run_in_pty(repo, answer)
    assert returncode == code, output
    assert "Apply this patch?" in output
    assert (repo / "a.txt").read_text() == content


@pytest.mark.parametrize("trick", ["\x1b[2K\x1b[1G", "\r", "\x1b]0;title\x07", "\u202e"])
def test_control_chars_in_apply_diff_are_visible(repo: Path, trick: str) -> None:
    """F8: `ctxagent apply` shows the same escaped preview, with the warning, as the agent's approval;
    the file still gets exactly the bytes of the patch."""
    from ctxagent.cli.safe_text import CONTROL_WARNING, visible

    line = f"evil(){trick}+print('hello')"
    (repo.parent / "ctl.patch").write_text(f"*** Begin Patch\n*** Add File: shown.py\n+{line}\n*** End Patch\n",
                                           newline="")
    result = invoke(["apply", str(repo.parent / "ctl.patch"), "--repo", str(repo), "--yes"])
    assert result.exit_code == 0, result.output
    assert CONTROL_WARNING in result.output and f"+{visible(line)}" in result.output
    assert trick not in result.output
    assert (repo / "shown.py").read_bytes() == f"{line}\n".encode()
