"""Slash commands through the real `ctxagent chat` (in process), the model a fake HTTP server.

The repository holds Claude Code's documented custom commands (tests/fixtures/slash)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxagent.todo.board import TodoBoard
from ctxagent.tools.todo import board_path
from tests.cli.slash.conftest import flat, user_messages
from tests.support.fake_openai import text

BUILT_INS = ("help", "plan", "todo", "notes", "memory", "skills", "context", "compact", "cost", "usage", "model",
             "exit")
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def test_custom_command_with_positional_arguments(chat) -> None:
    out, server = chat(["/review-pr 456 high alice", "/fix-issue 123 high-priority", "/exit"])
    assert out.exit_code == 0, out.output
    assert user_messages(server.requests[0])[-1].strip() == "Review PR #456 with priority high and assign to alice."
    assert user_messages(server.requests[1])[-1].strip() == "Fix issue #123 high-priority following our coding standards."


def test_custom_command_inlines_files_of_the_workspace_only(chat, project: Path) -> None:
    (project / ".claude" / "commands" / "peek.md").write_text("Look at @src/old-version.js and @../secret.txt "
                                                              "and @src/missing.js, then tell @alice.\n")
    (project.parent / "secret.txt").write_text("TOP SECRET\n")
    out, server = chat(["/compare", "/peek", "/exit"])
    assert out.exit_code == 0, out.output
    compare = user_messages(server.requests[0])[-1]
    assert '<file path="src/utils/helpers.js">\nexport function slugify(text) {' in compare
    assert '<file path="src/old-version.js">\nexport const version = 1;\n</file> with ' \
           '<file path="src/new-version.js">\nexport const version = 2;\n</file>' in compare
    peek = user_messages(server.requests[1])[-1]
    assert "TOP SECRET" not in peek and "TOP SECRET" not in out.output
    assert "[@../secret.txt was not inlined: the path '../secret.txt' is not allowed (it is outside the workspace" in peek
    assert "[@src/missing.js was not inlined: no such file in the workspace]" in peek
    assert "then tell @alice." in peek  # a mention, not a file
    shown = flat(out.output)
    assert "/compare: inlined src/utils/helpers.js, src/old-version.js, src/new-version.js" in shown
    assert "/peek: refused @../secret.txt" in shown and "/peek: refused @src/missing.js" in shown


@needs_git
def test_bang_commands_run_read_only_and_a_write_command_is_refused(chat, project: Path) -> None:
    (project / "README.md").write_text("changed\n")
    (project / ".claude" / "commands" / "clean.md").write_text("Before: !`ls src`\nNow: !`rm -rf src`\n")
    out, server = chat(["/git:commit", "/clean", "/exit"])
    assert out.exit_code == 0, out.output
    commit = user_messages(server.requests[0])[-1]
    assert "- Current git status: On branch main" in commit and "modified:   README.md" in commit
    assert "-# Fixture: custom slash commands" in commit and "+changed" in commit  # git diff HEAD
    assert "- Recent commits: " in commit and " init\n" in commit
    # `git branch` is outside the read-only terminal's git subcommands: refused, and the prompt says so
    assert "- Current branch: [!`git branch --show-current` was not run: git: the subcommand 'branch' is not allowed" \
        in commit
    clean = user_messages(server.requests[1])[-1]
    assert "Before: new-version.js\nold-version.js\nutils" in clean
    assert "Now: [!`rm -rf src` was not run: terminal:" in clean
    assert (project / "src" / "old-version.js").exists()
    assert "/clean: refused !`rm -rf src`" in flat(out.output)


def test_allowed_tools_and_model_hold_for_that_turn_only(chat) -> None:
    out, server = chat(["/quick-commit fix the greeting", "and now?", "/exit"])
    assert out.exit_code == 0, out.output
    first, second = server.requests
    assert first["model"] == "claude-3-5-haiku-20241022" and second["model"] == "fake-model"
    assert user_messages(first)[-1].strip() == "Create a git commit with message: fix the greeting"
    [tool] = first["tools"]
    assert tool["function"]["name"] == "terminal"
    assert "only: git add:*, git status:*, git commit:*" in tool["function"]["description"]
    assert len(second["tools"]) > 1
    shown = flat(out.output)
    assert "tools for this turn: terminal (only: git add:*, git status:*, git commit:*)" in shown
    assert "model for this turn: claude-3-5-haiku-20241022" in shown


def test_model_switches_the_next_requests_and_says_what_changes(chat) -> None:
    out, server = chat(["first", "/model gpt-4o-mini", "second", "third", "/model", "/exit"])
    assert out.exit_code == 0, out.output
    assert [r["model"] for r in server.requests] == ["fake-model", "gpt-4o-mini", "gpt-4o-mini"]
    shown = flat(out.output)
    assert "model fake-model -> gpt-4o-mini for the next turns" in shown
    assert "context window 128,000 -> 128,000 tokens (preset openai)" in shown
    assert "prices: none set, so cost is still not counted" in shown
    assert "model gpt-4o-mini (provider custom)" in shown


def test_colon_plan_runs_the_plan_tool_and_fills_the_board(chat, project: Path) -> None:
    steps = [{"title": f"step {i}", "detail": f"do {i}", "validation": f"check {i}"} for i in range(1, 6)]
    plan = {"goal": "add a flag", "steps": steps, "risks": [{"risk": "breaks usage", "mitigation": "tests"}]}
    out, server = chat([":plan add a --verbose flag", ":todo", ":) hello", " /etc is a folder", "/exit"],
                       script=[text(json.dumps(plan))])
    assert out.exit_code == 0, out.output
    assert "add a --verbose flag" in user_messages(server.requests[0])[0]
    assert [i.content for i in TodoBoard(board_path(project)).items()] == [s["title"] for s in steps]
    shown = flat(out.output)
    assert "step 1" in shown and "todo 0/5 completed" in shown
    assert user_messages(server.requests[1])[-1].startswith(":) hello\n\n[State]")  # not a command: sent to the model
    # the board did not change since: its block stays after ":) hello", where the model read it (issue 16)
    assert user_messages(server.requests[2])[-1] == " /etc is a folder"
    assert user_messages(server.requests[2])[:-1] == user_messages(server.requests[1])


def test_help_lists_every_command_and_unknown_names_get_a_suggestion(chat) -> None:
    out, server = chat(["/help", "/modle gpt-4o", "/git:comit", "/zzzz", "/usr/bin/env is slow", "/exit"])
    assert out.exit_code == 0, out.output
    shown = flat(out.output)
    for name in (*BUILT_INS, "review-pr", "fix-issue", "git:commit", "quick-commit", "compare"):
        assert f"/{name}" in shown, name
    assert "/review-pr [pr-number] [priority] [assignee] Review pull request" in shown
    assert "/git:commit Create a git commit (project:" in shown
    assert "unknown command /modle; did you mean /model? type /help" in shown
    assert "unknown command /git:comit; did you mean /git:commit?" in shown
    assert "unknown command /zzzz; type /help for the list" in shown
    assert "not a command: '/usr/bin/env is slow'" in shown and "start the line with a space" in shown
    assert server.requests == []


def test_compact_focus_reaches_the_summary_request(chat, tmp_path: Path) -> None:
    config = tmp_path / "home" / ".config" / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[context]\ncompaction_keep_messages = 1\n")  # a verbatim tail of one message: the rest is summarised
    rules = [{"contains": "You are compacting", "step": text("## Goal\n- greet\n## Next steps\n- none\n")}]
    out, server = chat(["read the app", "and the tests", "/compact the greeting function", "/exit"],
                       script=[text("read it"), text("tests read")], rules=rules)
    assert out.exit_code == 0, out.output
    summary = [r for r in server.requests if any("You are compacting" in str(m.get("content")) for m in r["messages"])]
    assert len(summary) == 1
    assert "The user asked this compaction to keep, above all: the greeting function" in json.dumps(summary[0])


def test_bad_front_matter_is_skipped_with_a_warning_and_built_ins_win(chat, project: Path) -> None:
    commands = project / ".claude" / "commands"
    (commands / "broken.md").write_text("---\ndescription: [unclosed\n  - x: y\n---\nbody\n")
    (commands / "help.md").write_text("---\ndescription: my help\n---\nHelp me with $ARGUMENTS\n")
    out, server = chat(["/help", "/broken", "/help", "/exit"])
    assert out.exit_code == 0, out.output
    shown = flat(out.output)
    assert f"warning: {commands / 'broken.md'}: invalid YAML front matter" in shown
    assert shown.count("invalid YAML front matter") == 1 and shown.count("the built-in /help takes the name") == 1
    assert "unknown command /broken" in shown
    assert server.requests == []


def test_user_commands_and_repo_commands_first(chat, project: Path, tmp_path: Path) -> None:
    user = tmp_path / "home" / ".config" / "ctxagent" / "commands"
    user.mkdir(parents=True)
    (user / "fix-issue.md").write_text("the user's own fix-issue\n")
    (user / "standup.md").write_text("---\ndescription: what I did\n---\nSummarise yesterday's commits.\n")
    (project / ".ctxagent" / "commands").mkdir(parents=True)
    (project / ".ctxagent" / "commands" / "fix-issue.md").write_text("ctxagent's fix-issue $1\n")
    out, server = chat(["/fix-issue 7", "/standup", "/exit"])
    assert out.exit_code == 0, out.output
    assert user_messages(server.requests[0])[-1].strip() == "ctxagent's fix-issue 7"
    assert user_messages(server.requests[1])[-1].strip() == "Summarise yesterday's commits."


def test_memory_and_skills_say_what_is_loaded(chat, project: Path) -> None:
    (project / "AGENTS.md").write_text("# Rules\nUse tabs.\n")
    out, _ = chat(["/memory", "/skills", "/cost", "/exit"])
    assert out.exit_code == 0, out.output
    shown = flat(out.output)
    assert f"agents {project / 'AGENTS.md'} 18 bytes (repo)" in shown
    assert f"no skills found (searched: {project / '.agents' / 'skills'}" in shown
    assert "cost unknown: no prices set for fake-model" in shown


def test_usage_and_cost_count_every_call_with_cache_hits(chat, tmp_path: Path) -> None:
    config = tmp_path / "home" / ".config" / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[model]\nprice_prompt_per_mtok = 2.0\nprice_completion_per_mtok = 10.0\n")
    steps = [{"title": f"step {i}", "detail": "d", "validation": "v"} for i in range(5)]
    plan = json.dumps({"goal": "g", "steps": steps, "risks": ["r"]})
    script = [text(plan, usage={"prompt_tokens": 300, "completion_tokens": 100}),
              text("hi", usage={"prompt_tokens": 1000, "completion_tokens": 50,
                                "prompt_tokens_details": {"cached_tokens": 400}})]
    out, _ = chat(["/plan g", "hello", "/usage", "/cost", "/exit"], script=script)
    assert out.exit_code == 0, out.output
    shown = flat(out.output)
    assert "1 turns, 1 model calls by the loop" in shown
    assert "tokens in 1,300 (cache hits 400, 31% of input)" in shown and "tokens out 150 (reasoning 0)" in shown
    assert "of these, 400 tokens went to side calls (plan tool, compaction summaries)" in shown
    cost = (1300 * 2.0 + 150 * 10.0) / 1e6  # no cache price set: cached tokens at the prompt price
    assert shown.count(f"cost so far ${cost:.4f} (prices now $2 in, $2 cached, $10 out per million tokens "
                       "(settings))") == 2


def test_skills_lists_a_real_skill_and_warns_about_a_broken_one(chat, project: Path) -> None:
    skills = project / ".claude" / "skills"
    shutil.copytree(Path(__file__).resolve().parents[2] / "fixtures" / "skills" / "internal-comms", skills / "internal-comms")
    (skills / "Bad_Name").mkdir()
    (skills / "Bad_Name" / "SKILL.md").write_text("---\nname: Bad_Name\ndescription: x\n---\nbody\n")
    out, _ = chat(["/skills", "/memory", "/exit"])
    assert out.exit_code == 0, out.output
    shown = flat(out.output)
    assert "internal-comms" in shown and str(skills / "internal-comms" / "SKILL.md") in shown
    assert "Bad_Name" in shown and "skipped" in shown
