"""Issue 15 item 2: ctxagent's own state (`.ctxagent/`: sessions, snapshots, backups, the
checkpoint store) stays out of the terminal's recursive commands unless a path names it.

Each command family is run for real on a workspace with a state folder at the top and a
nested one, and compared with the same command on a copy without them: the output must
be the same (hiding changes nothing else), the state must not show, and naming the
folder (or a path in it) must show it again."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ctxagent.errors import CtxAgentError
from ctxagent.exec.checkpoints import CheckpointStore
from ctxagent.shell.commands.git import HIDING_PATHSPEC
from ctxagent.shell.parse import parse_pipeline
from ctxagent.shell.paths import PathContext
from ctxagent.shell.policy import check_pipeline
from ctxagent.shell.programs import find_program, find_rg
from ctxagent.storage.files import STATE_DIR_NAME
from ctxagent.tools import TerminalTool

NOTE = ".ctxagent/ (ctxagent's own sessions"
_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}


def _tree(root: Path, with_state: bool) -> Path:
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / "filesize.py").write_text("def decimal(size):\n    return str(size)\n")
    (root / "src" / "deep" / "notes.md").write_text("decimal notes\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "x.txt").write_text("decimal hidden\n")
    (root / "-dash.txt").write_text("decimal dash\n")
    if with_state:
        for state in (root / STATE_DIR_NAME, root / "src" / STATE_DIR_NAME):
            (state / "backups" / "20260101" / "src").mkdir(parents=True)
            (state / "backups" / "20260101" / "src" / "filesize.py").write_text("def decimal(old):\n")
            (state / "sessions").mkdir()
            (state / "sessions" / "s1.jsonl").write_text('{"text": "def decimal"}\n' * 50)
    return root


@pytest.fixture
def pair(tmp_path: Path) -> tuple[TerminalTool, TerminalTool]:
    """(a terminal on a workspace with state folders, one on the same tree without)."""
    with_state, without = _tree(tmp_path / "ws", True), _tree(tmp_path / "plain", False)
    return TerminalTool(with_state, timeout=20), TerminalTool(without, timeout=20)


def _out(tool: TerminalTool, command: str) -> str:
    result = tool.execute({"command": command})
    assert result.ok, result.content
    return result.content


def _same_without_state(pair, command: str) -> str:
    """The output on the workspace with state, checked to equal (but for the note and the
    workspace name) the output on the plain copy, and to hold no state."""
    tool, plain = pair
    text = _out(tool, command)
    body = "\n".join(line for line in text.splitlines() if not line.startswith("[" + NOTE))
    expected = _out(plain, command).replace(str(plain.workspace), str(tool.workspace))
    assert body == expected, f"{command!r}:\n{text}\n--- without state:\n{expected}"
    assert STATE_DIR_NAME not in body and "sessions" not in body
    return text


COMMANDS = [
    "grep -rn decimal .", "grep -rn decimal", "grep -rln decimal src", "grep -r -l decimal --include=*.py .",
    "grep -d recurse -l decimal .", "grep --recursive -c decimal .",
    "find .", "find . -name filesize.py", "find src", "find . -type f -name '*.py' -print",
    "find . -maxdepth 2 -type d", "find . -mindepth 1 -maxdepth 1", "find . -depth", "find . -depth -type f",
    "find . -name src -prune -o -type f -print", "find . -name deep -prune -o -name '*.md'",
    "find . '(' -name '*.py' -o -name '*.md' ')' -print", "find . ! -name '*.py' -type f",
    "find . -name filesize.py -print -quit", "find . -type f -printf '%p\\n'", "find . -print0",
    "find . -name '*.txt' , -name '*.md'", "find -P . -regextype posix-extended -regex '.*\\.py'",
    "ls -R", "ls -aR", "ls -1aR src", "ls -AR .", "ls --recursive -a",
    "du -a", "du -s .", "du -a src", "du --max-depth=1 .",
    "diff -r . .", "diff -rq src src",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_recursive_commands_leave_the_state_out_and_nothing_else(pair, command):
    _same_without_state(pair, command)


def test_the_grep_of_the_report_finds_one_hit_and_says_what_was_left_out(pair):
    tool, _ = pair
    text = _out(tool, 'grep -rn "def decimal" .')
    assert text.splitlines()[0] == "./src/filesize.py:1:def decimal(size):"
    assert len(text.splitlines()) == 2 and NOTE in text and "`ls .ctxagent`" in text
    assert _out(tool, "find . -name filesize.py").splitlines()[0] == "./src/filesize.py"


@pytest.mark.parametrize("command,shown", [
    ("grep -rn decimal .ctxagent", ".ctxagent/backups/20260101/src/filesize.py:1:def decimal(old):"),
    ("grep -rln decimal .ctxagent/sessions", ".ctxagent/sessions/s1.jsonl"),
    ("grep -n decimal .ctxagent/backups/20260101/src/filesize.py", "1:def decimal(old):"),
    ("find .ctxagent -name filesize.py", ".ctxagent/backups/20260101/src/filesize.py"),
    ("find . -path '*/.ctxagent/*' -name s1.jsonl", "./.ctxagent/sessions/s1.jsonl"),
    ("find src/.ctxagent -type d -name sessions", "src/.ctxagent/sessions"),
    ("ls .ctxagent", "backups"), ("ls -R .ctxagent", ".ctxagent/sessions:"),
    ("ls -a", ".ctxagent"),  # not recursive: the folder is listed, its contents are not searched
    ("du -a .ctxagent", ".ctxagent/sessions/s1.jsonl"),
    ("cat .ctxagent/sessions/s1.jsonl", '"def decimal"'),
    ("grep -rl decimal .c*", ".ctxagent/sessions/s1.jsonl"),  # a glob that matches it names it
])
def test_naming_the_state_folder_shows_it(pair, command, shown):
    tool, _ = pair
    text = _out(tool, command)
    assert shown in text and NOTE not in text


def test_from_a_subdirectory_the_nested_and_the_top_state_stay_out(pair):
    tool, _ = pair
    tool.run({"command": "cd src"})
    for command in ("grep -rln decimal ..", "find .. -name filesize.py", "du -a ..", "ls -aR .."):
        text = _out(tool, command)
        assert "filesize.py" in text and "s1.jsonl" not in text and "`ls ../.ctxagent`" in text, text
    text = _out(tool, "grep -rln decimal")
    assert "filesize.py" in text and "s1.jsonl" not in text and "`ls .ctxagent`" in text


def test_the_checkpoint_store_lives_in_the_hidden_folder(tmp_path):
    store = CheckpointStore.for_repo(tmp_path)
    assert STATE_DIR_NAME in store.root.relative_to(tmp_path).parts


def _argv(ctx: PathContext, line: str) -> list[str]:
    return check_pipeline(parse_pipeline(line), ctx)[0]


@pytest.fixture
def ctx(tmp_path: Path) -> PathContext:
    ws = _tree(tmp_path / "ws", True).resolve()
    return PathContext(root=str(ws), cwd=str(ws))


def test_the_exclusion_comes_right_after_the_command_name_so_no_word_can_take_it(ctx):
    # a flag that takes a value is always followed by the user's own value
    assert _argv(ctx, "grep -rne x .")[:3] == ["grep", "--exclude-dir=.ctxagent", "-rne"]
    assert _argv(ctx, "grep -r -e --exclude-dir=x .")[-2:] == ["--exclude-dir=x", "."]
    assert _argv(ctx, "ls -R -I x")[:2] == ["ls", "--ignore=.ctxagent"]
    assert _argv(ctx, "du -a -- -dash.txt")[:2] == ["du", "--exclude=.ctxagent"]
    # rg's last glob wins (and iglobs come after globs): its exclusion ends the flags (break test 2026-12-02)
    assert _argv(ctx, "rg -n x") == ["rg", "-n", "x", "--iglob=!.ctxagent"]
    assert _argv(ctx, "rg --files -- -dash.txt") == ["rg", "--files", "--iglob=!.ctxagent", "--", "-dash.txt"]
    assert _argv(ctx, "rg -g -- x -- --")[-3:] == ["--iglob=!.ctxagent", "--", "--"]
    assert _argv(ctx, "tree -a -I node_modules")[:3] == ["tree", "-I", ".ctxagent"]
    # not recursive: unchanged
    assert _argv(ctx, "grep -n x a.txt") == ["grep", "-n", "x", "a.txt"]
    assert _argv(ctx, "ls -la") == ["ls", "-la"]
    assert _argv(ctx, "diff a b") == ["diff", "--no-dereference", "a", "b"]


def test_find_keeps_its_leading_options_first_and_a_broken_expression_as_it_is(ctx):
    argv = _argv(ctx, "find . -maxdepth 1 -name x")
    assert argv[:4] == ["find", ".", "-maxdepth", "1"] and argv[-5:] == ["(", "-name", "x", ")", "-print"]
    assert _argv(ctx, "find . -name x ')' -o '(' -name y") == ["find", ".", "-name", "x", ")", "-o", "(", "-name", "y"]
    assert _argv(ctx, "find . -name '(' -print")[-4:] == ["-name", "(", "-print", ")"]


def test_hiding_cannot_unlock_anything(ctx):
    for line in ("find . -exec id ;", "grep -R x .", "rg --pre=sh x", "du -L .", "ls -R /", "find / -name x",
                 "git grep -O x", "tree -o out"):
        with pytest.raises(CtxAgentError):
            _argv(ctx, line)


def _git_repo(root: Path) -> None:
    for args in (["init", "-q"], ["add", "-A", "-f"], ["commit", "-q", "-m", "x"]):
        subprocess.run(["git", *args], cwd=root, env=_GIT_ENV, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_grep_and_ls_files_leave_committed_state_out_unless_named(tmp_path):
    ws = _tree(tmp_path / "ws", True)
    _git_repo(ws)  # the state is committed (forced past any ignore file): the worst case
    tool = TerminalTool(ws, timeout=20)
    for command in ("git grep -n decimal", "git grep -l decimal -- src", "git grep -l decimal src",
                    "git ls-files", "git ls-files src", "git grep -c decimal -- .", "git ls-files -- src"):
        text = _out(tool, command)
        assert "filesize.py" in text and STATE_DIR_NAME not in text, (command, text)
    assert ".ctxagent/sessions/s1.jsonl" in _out(tool, "git grep -l decimal .ctxagent")
    assert ".ctxagent/sessions/s1.jsonl" in _out(tool, "git ls-files .ctxagent")
    tool.run({"command": "cd src"})
    text = _out(tool, "git grep -l decimal -- ..")
    assert "filesize.py" in text and STATE_DIR_NAME not in text
    # a revision without `--`: git decides what the words are, so nothing is added
    assert HIDING_PATHSPEC not in _argv(tool.ctx, "git grep -l decimal HEAD")
    assert _argv(tool.ctx, "git grep -l decimal -- ..")[-1] == HIDING_PATHSPEC


@pytest.mark.skipif(find_rg() is None, reason="rg is not installed")
def test_rg_with_hidden_files_leaves_the_state_out(pair):
    for command in ("rg -n --sort path --hidden decimal", "rg -l -uu --sort path decimal",
                    "rg --files --hidden --sort path", "rg -l --no-ignore -. --sort path decimal"):
        _same_without_state(pair, command)
    assert "s1.jsonl" in _out(pair[0], "rg -l --hidden decimal .ctxagent")


@pytest.mark.skipif(find_program("tree") is None, reason="tree is not installed")
def test_tree_leaves_the_state_out(pair):
    for command in ("tree -a", "tree -a src", "tree -a -I deep"):
        _same_without_state(pair, command)
