"""The chat's completer (`ctxagent.cli.completion`): what it offers for `/name` and `@path`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from ctxagent.cli.completion import MAX_PATH_COMPLETIONS, ChatCompleter, CommandChoice, slash_choices

CHOICES = [CommandChoice("undo", "[--force]", "restore the last change"), CommandChoice("usage", "", "tokens"),
           CommandChoice("help", "", "the commands")]


def offered(completer: ChatCompleter, before: str) -> list[str]:
    document = Document(before, cursor_position=len(before))
    return [c.text for c in completer.get_completions(document, CompleteEvent(completion_requested=True))]


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("x\n")
    (ws / "src" / "api.py").write_text("x\n")
    (ws / "README.md").write_text("x\n")
    (ws / ".env").write_text("KEY=1\n")
    (ws / ".git").mkdir()
    (ws / ".ctxagent").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("x\n")
    (ws / "out").symlink_to(tmp_path / "outside")
    return ws


def test_slash_at_line_start_offers_matching_commands_with_their_help(ws):
    completer = ChatCompleter(str(ws), lambda: CHOICES)
    assert offered(completer, "/u") == ["undo", "usage"]
    assert offered(completer, "/") == ["help", "undo", "usage"]
    metas = {c.text: c.display_meta_text for c in completer.get_completions(Document("/un"), CompleteEvent())}
    assert metas == {"undo": "restore the last change"}
    assert offered(completer, "see /u") == []  # not at the start: a message
    assert offered(completer, "/undo ") == []


def test_at_path_offers_workspace_entries_folders_with_a_slash(ws):
    completer = ChatCompleter(str(ws), lambda: CHOICES)
    assert offered(completer, "fix @src/a") == ["api.py", "app.py"]
    assert offered(completer, "@s") == ["src/"]
    assert offered(completer, "@src/") == ["api.py", "app.py", "pkg/"]
    assert offered(completer, "(@R") == ["README.md"]
    assert offered(completer, "mail bob@ex") == []  # not a path reference


def test_state_folders_and_hidden_names_are_left_out_unless_asked(ws):
    completer = ChatCompleter(str(ws), lambda: CHOICES)
    names = offered(completer, "@")
    assert ".git/" not in names and ".ctxagent/" not in names and ".env" not in names
    assert offered(completer, "@.e") == [".env"]
    assert offered(completer, "@.g") == []


def test_nothing_outside_the_workspace_is_listed(ws):
    completer = ChatCompleter(str(ws), lambda: CHOICES)
    assert offered(completer, "@../") == []
    assert offered(completer, "@out/") == []  # a link leading outside
    assert offered(completer, "@/etc/") == []
    assert offered(completer, "@nosuch/") == []


def test_a_huge_folder_offers_at_most_the_cap(ws):
    big = ws / "big"
    big.mkdir()
    for i in range(MAX_PATH_COMPLETIONS + 50):
        (big / f"f{i:04d}.txt").write_text("")
    assert len(offered(ChatCompleter(str(ws), lambda: CHOICES), "@big/")) == MAX_PATH_COMPLETIONS


def test_slash_choices_has_built_ins_and_custom_commands_a_built_in_does_not_shadow(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    folder = tmp_path / "repo" / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "reviewit.md").write_text("---\ndescription: Review the code\nargument-hint: FILE\n---\nReview $1\n")
    (folder / "undo.md").write_text("Not used: the built-in wins\n")
    choices = {c.name: c for c in slash_choices(tmp_path / "repo")}
    assert choices["reviewit"].description == "Review the code" and choices["reviewit"].args == "FILE"
    assert choices["undo"].description != "Not used: the built-in wins"
    assert {"help", "compact", "usage", "rewind"} <= set(choices)
    assert os.environ["HOME"] == str(tmp_path / "home")


def test_shell_completion_of_the_ctxagent_command_lists_lazy_commands_and_options(tmp_path):
    """click's shell completion goes through the lazy group (`ctxagent.cli.main.COMMANDS`)."""
    import subprocess
    import sys

    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "_CTXAGENT_COMPLETE": "bash_complete"}
    def complete(words: str, cword: int) -> list[str]:
        out = subprocess.run([sys.executable, "-m", "ctxagent"], env={**env, "COMP_WORDS": words,
                             "COMP_CWORD": str(cword), "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
                             capture_output=True, text=True, timeout=60, check=True).stdout
        return [line.split(",", 1)[1] for line in out.splitlines()]
    assert complete("ctxagent ch", 1) == ["chat", "checkpoints"]
    assert complete("ctxagent chat --re", 2) == ["--repo", "--resume"]
