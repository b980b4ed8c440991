"""Finding F1 of the break test as a class: every flag whose value
names a file the program opens (`git grep -f FILE`, `grep --exclude-from`, `rg
--ignore-file`...) must be confined to the workspace like a path operand, or refused.

The class is closed in two places: the flag tables say which flags take a PATH (and the
documented file-taking flags of each program are checked against them here), and the
scanner itself confines PATH values, so no command (git included) can skip the check."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ctxagent.errors import ToolRefusedError
from ctxagent.shell.commands.git_specs import SUBCOMMANDS
from ctxagent.shell.parse import parse_pipeline
from ctxagent.shell.paths import PathContext
from ctxagent.shell.policy import check_pipeline
from ctxagent.shell.specs import PATH, SPECS, Spec
from ctxagent.tools import TerminalTool
from tests.shell.helpers import make_workspace

# Flags documented (the programs' --help / manuals: coreutils 9.1, grep 3.8, ripgrep 13,
# sed 4.9, file 5.44, tree 2.1, git 2.39, diffutils 3.8) to open a file or directory named by their value.
FILE_TAKING_FLAGS: dict[str, list[str]] = {
    "grep": ["-f", "--file", "--exclude-from"],
    "rg": ["-f", "--file", "--ignore-file", "--pre"],
    "sort": ["-o", "--output", "-T", "--temporary-directory", "--random-source", "--files0-from"],
    "wc": ["--files0-from"],
    "du": ["-X", "--exclude-from", "--files0-from"],
    "file": ["-m", "--magic-file", "-f", "--files-from"],
    "sed": ["-f", "--file", "-i", "--in-place"],
    "awk": ["-f"],
    "tree": ["-o", "--fromfile", "--infile", "-R"],
    "tail": ["--pid"],
    "diff": ["-X", "--exclude-from", "--from-file", "--to-file", "-S", "--starting-file"],
    "git grep": ["-f", "-O", "--open-files-in-pager"],
    "git blame": ["--contents", "--ignore-revs-file", "-S"],
    "git diff": ["-O", "--output", "--no-index"],
    "git log": ["-O", "--output", "--stdin", "--pathspec-from-file"],
    "git show": ["-O", "--output", "--stdin"],
    "git ls-files": ["-X", "--exclude-from", "--exclude-per-directory", "--pathspec-from-file"],
    "git status": ["--pathspec-from-file"],
}


def _spec(command: str) -> Spec:
    return SUBCOMMANDS[command.split()[1]] if command.startswith("git ") else SPECS[command]


def _kind(spec: Spec, flag: str) -> str | None:
    return spec.long.get(flag) if flag.startswith("--") else spec.short.get(flag[1:])


def _path_flags() -> list[tuple[str, str]]:
    """(command, flag) for every PATH flag in every allow-list."""
    out = []
    for command, spec in [*SPECS.items(), *((f"git {s}", spec) for s, spec in SUBCOMMANDS.items())]:
        out += [(command, "-" + c) for c, kind in spec.short.items() if kind == PATH]
        out += [(command, name) for name, kind in spec.long.items() if kind == PATH]
    return out


def _spellings(flag: str, value: str) -> list[str]:
    if flag.startswith("--"):
        return [f"{flag}={value}", f"{flag} {value}"]
    return [f"{flag}{value}", f"{flag} {value}"]


@pytest.fixture
def ctx(tmp_path: Path) -> PathContext:
    ws = make_workspace(tmp_path).resolve()
    (tmp_path / "secret.txt").write_text("sk-OUTSIDE[SECRET\n")
    (ws / "link_out").symlink_to(tmp_path / "secret.txt")
    return PathContext(root=str(ws), cwd=str(ws / "src"))


@pytest.mark.parametrize("command,flag", [(c, f) for c, flags in FILE_TAKING_FLAGS.items() for f in flags])
def test_F1_every_file_taking_flag_is_path_or_refused(command, flag):
    kind = _kind(_spec(command), flag)
    assert kind in (None, PATH), f"{command} {flag} opens a file but its value is {kind!r}, not PATH"


def test_F1_the_allow_lists_have_path_flags_to_check():
    assert {("grep", "-f"), ("rg", "--ignore-file"), ("git grep", "-f")} <= set(_path_flags())
    assert "--file" not in SUBCOMMANDS["grep"].long  # git grep has no --file


@pytest.mark.parametrize("command,flag", _path_flags())
@pytest.mark.parametrize("value", ["/etc/passwd", "../../secret.txt", "../link_out", "../../*"])
def test_F1_every_path_flag_is_confined_in_every_spelling(ctx, command, flag, value):
    for spelling in _spellings(flag, value):
        with pytest.raises(ToolRefusedError) as err:
            check_pipeline(parse_pipeline(f"{command} {spelling} foo"), ctx)
        assert "outside the workspace" in str(err.value) and flag in str(err.value)


@pytest.mark.parametrize("command,flag", _path_flags())
def test_F1_path_flag_values_reach_the_program_as_checked_absolute_paths(ctx, command, flag):
    inside = str(Path(ctx.root) / "a.txt")
    for spelling in _spellings(flag, "../a.txt"):
        argv = check_pipeline(parse_pipeline(f"{command} {spelling} foo"), ctx)[0]
        assert inside in argv or any(w.endswith("=" + inside) or w == flag + inside for w in argv), argv
        assert "../a.txt" not in " ".join(argv)


def test_F1_stdin_as_a_path_value_is_kept(ctx):
    assert check_pipeline(parse_pipeline("grep -f - a.txt"), ctx)[0][:3] == ["grep", "-f", "-"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
class TestGitGrepFile:
    """The breaker's repro: `git grep -f FILE` printed an outside file's first line."""

    @pytest.fixture
    def repo(self, tmp_path: Path) -> Path:
        ws = make_workspace(tmp_path)
        env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
               "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "T",
               "GIT_COMMITTER_EMAIL": "t@e"}
        for args in (["init", "-q", "."], ["add", "."], ["commit", "-q", "-m", "i"]):
            subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True)
        (tmp_path / "secret_pat").write_text("sk-SECRETKEY[abc\n")
        (ws / "link_out").symlink_to(tmp_path / "secret_pat")
        (ws / "src" / "pats").write_text("print\n")
        return ws

    @pytest.mark.parametrize("command", [
        "git grep -f {secret}", "git grep -f{secret}", "git grep -f link_out", "git grep -nf ../{name}",
        "git grep --file={secret}",
    ])
    def test_F1_git_grep_pattern_file_outside_is_refused(self, repo, command):
        secret = repo.parent / "secret_pat"
        line = command.format(secret=secret, name="secret_pat")
        result = TerminalTool(workspace=repo, timeout=20).execute({"command": line})
        assert not result.ok and "not allowed" in result.content
        assert "SECRETKEY" not in result.content

    def test_F1_git_grep_pattern_file_is_read_relative_to_the_current_directory(self, repo):
        tool = TerminalTool(workspace=repo, timeout=20)
        tool.run({"command": "cd src"})
        assert "main.py:3:    print('hi')" in tool.run({"command": "git grep -n -f pats"})
