"""The parts of custom commands on their own: files, front matter, arguments, tool rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxagent.cli.slash.allowed_tools import LimitedTerminal, TerminalLimit, command_allowed, grant_for
from ctxagent.cli.slash.custom import MAX_COMMAND_BYTES, CommandFileError, discover, load_command
from ctxagent.cli.slash.expand import expand, fill_arguments
from ctxagent.cli.slash.registry import parse_line, suggest
from tests.cli.slash.conftest import FIXTURE

COMMANDS = FIXTURE / ".claude" / "commands"
OUR_TOOLS = ["terminal", "apply_patch", "context_fetch", "note", "todo", "plan", "memory", "rag"]


@pytest.mark.parametrize(("body", "args", "expected"), [
    ("Fix issue #$ARGUMENTS following our coding standards.", "123 high-priority",
     "Fix issue #123 high-priority following our coding standards."),
    ("Review PR #$1 with priority $2 and assign to $3.", "456 high alice", "Review PR #456 with priority high and assign to alice."),
    ("Review PR #$1 with priority $2 and assign to $3.", "456", "Review PR #456 with priority  and assign to ."),
    ("first $1, not $10", "a", "first a, not $10"),
    ("title: $1; rest: $2", '"two words" b', "title: two words; rest: b"),
    ("unbalanced $1", '"oops b', 'unbalanced "oops'),
    ("Summarise the diff.", "", "Summarise the diff."),
    ("Summarise the diff.\n", "only src/", "Summarise the diff.\n\nARGUMENTS: only src/\n"),
])
def test_arguments_fill_as_claude_code_documents(body: str, args: str, expected: str) -> None:
    assert fill_arguments(body, args) == expected


def test_expansion_does_not_rescan_what_files_and_commands_bring(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("see @b.md and !`cat secret`\n")
    (tmp_path / "b.md").write_text("B\n")
    ran = []
    out = expand("Read @a.md; !`ls`; mail a@b.md", "", repo=tmp_path, run=lambda c: (ran.append(c), (True, "x"))[1])
    assert ran == ["ls"] and out.files == ["a.md"]
    assert out.text == 'Read <file path="a.md">\nsee @b.md and !`cat secret`\n</file>; x; mail a@b.md'


def test_a_big_file_is_cut_and_marked(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 30_000)
    (tmp_path / "bin.dat").write_bytes(b"\0\1\2")
    out = expand("@big.txt @bin.dat", "", repo=tmp_path, run=lambda c: (True, ""))
    assert "[... big.txt cut at 20,000 characters of 30,000 bytes ...]" in out.text and "x" * 20_001 not in out.text
    assert "[@bin.dat was not inlined: a binary file]" in out.text


def test_the_documented_front_matter_is_read(tmp_path: Path) -> None:
    review = load_command(COMMANDS / "review-pr.md", COMMANDS, "project")
    assert (review.name, review.argument_hint, review.description) == (
        "review-pr", "[pr-number] [priority] [assignee]", "Review pull request")
    commit = load_command(COMMANDS / "git" / "commit.md", COMMANDS, "project")
    assert commit.name == "git:commit" and commit.model is None and commit.body.startswith("\n## Context")
    assert commit.allowed_tools == ["Bash(git add:*)", "Bash(git status:*)", "Bash(git commit:*)"]
    quick = load_command(COMMANDS / "quick-commit.md", COMMANDS, "project")
    assert (quick.argument_hint, quick.model) == ("[message]", "claude-3-5-haiku-20241022")
    fix = load_command(COMMANDS / "fix-issue.md", COMMANDS, "project")
    assert fix.description == "Fix issue #$ARGUMENTS following our coding standards." and fix.allowed_tools is None


@pytest.mark.parametrize(("text", "why"), [
    ("---\n- a\n- b\n---\nbody\n", "must be `key: value` lines"),
    ("---\ndescription: [a\n  b: c\n---\nbody\n", "invalid YAML front matter"),
    ("---\nallowed-tools: 3\n---\nbody\n", "allowed-tools must be a string"),
])
def test_bad_front_matter_names_the_file(tmp_path: Path, text: str, why: str) -> None:
    (tmp_path / "bad.md").write_text(text)
    with pytest.raises(CommandFileError, match=why) as info:
        load_command(tmp_path / "bad.md", tmp_path, "project")
    assert str(tmp_path / "bad.md") in str(info.value)


def test_front_matter_with_crlf_and_a_list_of_tools(tmp_path: Path) -> None:
    (tmp_path / "c.md").write_bytes(b"---\r\ndescription: Check\r\nallowed-tools:\r\n  - Read\r\n  - Bash(git diff:*)\r\n"
                                    b"---\r\nGo\r\n")
    command = load_command(tmp_path / "c.md", tmp_path, "user")
    assert (command.description, command.allowed_tools, command.body) == ("Check", ["Read", "Bash(git diff:*)"], "Go\n")


def test_discovery_first_folder_wins_and_refuses_links_out_and_big_files(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    ours, claude = repo / ".ctxagent" / "commands", repo / ".claude" / "commands"
    for folder in (ours, claude):
        folder.mkdir(parents=True)
    (ours / "review.md").write_text("ours\n")
    (claude / "review.md").write_text("claude's\n")
    (tmp_path / "outside.md").write_text("outside\n")
    os.symlink(tmp_path / "outside.md", claude / "linked.md")
    (claude / "big.md").write_text("x" * (MAX_COMMAND_BYTES + 1))
    (claude / "bad name.md").write_text("x\n")
    found, warnings = discover(repo, env={"HOME": str(tmp_path / "home")})
    assert [(c.name, c.body) for c in found] == [("review", "ours\n")]
    assert len(warnings) == 4
    assert any("a link to a file outside" in w for w in warnings) and any("larger than 64 KiB" in w for w in warnings)
    assert any("is shadowed by" in w for w in warnings) and any("is not a command name" in w for w in warnings)


def test_claude_tool_rules_map_to_our_tools() -> None:
    grant = grant_for(["Read", "Edit", "Bash(git diff:*)", "WebFetch", "note", "Task(explore)"], OUR_TOOLS)
    assert grant.tools == {"terminal": TerminalLimit(["git diff:*"], reading=True), "context_fetch": None,
                           "apply_patch": None, "note": None}
    assert grant.unknown == ["WebFetch (no ctxagent tool does this)", "Task(explore) (no ctxagent tool does this)"]
    limited = grant_for(["Bash(git add:*)", "Bash(git status:*)"], OUR_TOOLS)
    assert limited.tools == {"terminal": TerminalLimit(["git add:*", "git status:*"])}
    assert grant_for(["Bash(git add:*)", "Bash", "Read"], OUR_TOOLS).tools["terminal"] is None
    assert grant_for(["Edit"], ["terminal"]).unknown == ["Edit (this agent does not have it)"]


class Recorder:
    name, description = "terminal", "Run a command."

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def execute(self, args: dict) -> object:
        self.calls.append(args)
        return "ran"


def test_a_limited_terminal_runs_what_the_rules_allow() -> None:
    inner = Recorder()
    reading = LimitedTerminal(inner, TerminalLimit(["git add:*"], reading=True))
    assert reading.execute({"command": "cat README.md"}) == "ran"
    assert reading.execute({"command": "git add .", "allow_dangerous": True}) == "ran"
    refused = reading.execute({"command": "npm test", "allow_dangerous": True})
    assert refused.ok is False and "allowed: git add:* and read-only commands" in refused.content
    strict = LimitedTerminal(inner, TerminalLimit(["git status:*"]))
    assert strict.execute({"command": "cat README.md"}).ok is False
    assert [c["command"] for c in inner.calls] == ["cat README.md", "git add ."]


@pytest.mark.parametrize(("command", "patterns", "allowed"), [
    ("git diff HEAD", ["git diff:*"], True),
    ("git diff", ["git diff:*"], True),
    ("git diff-tree HEAD", ["git diff:*"], False),
    ("git log | head -5", ["git log:*"], False),
    ("git log | head -5", ["git log:*", "head:*"], True),
    ("git show HEAD", ["git *"], True),
    ("npm test", ["npm test"], True),
    ("npm test --watch", ["npm test"], False),
    ("git status; rm -rf /", ["git status:*"], False),
])
def test_bash_patterns(command: str, patterns: list[str], allowed: bool) -> None:
    assert command_allowed(command, patterns) is allowed


def test_line_parsing_and_suggestions() -> None:
    assert parse_line("/plan add a flag") == ("/", "plan", "add a flag")
    assert parse_line(":plan add a flag") == (":", "plan", "add a flag")
    assert parse_line("/git:commit") == ("/", "git:commit", "")
    assert parse_line(":) hi") is None and parse_line("/") is None
    assert suggest("modle", ["model", "memory"]) == "model"
    assert suggest("comp", ["compact", "context"]) == "compact"
    assert suggest("zzzz", ["model"]) is None
