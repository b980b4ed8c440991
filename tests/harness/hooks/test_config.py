"""Hook configuration read as Claude Code documents it: a settings.json `hooks` table, matchers
as regular expressions matched whole, `timeout` in seconds; bad entries name the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.errors import ConfigError
from ctxagent.harness.hooks import parse_hooks, read_hooks_file

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hooks"


def test_a_claude_code_settings_file_is_read_whole() -> None:
    rules = read_hooks_file(FIXTURES / "settings.json")
    assert [(r.event, r.matcher, r.timeout_s) for r in rules] == [
        ("PreToolUse", "Bash", 60.0), ("PreToolUse", "Edit|MultiEdit|Write", 10.0), ("Stop", None, 60.0)]
    bash, edits, stop = rules
    assert bash.matches("Bash") and not bash.matches("BashOutput")  # matched whole, as a regex
    assert edits.matches("MultiEdit") and not edits.matches("Read")
    assert stop.matches(None) and "$CLAUDE_PROJECT_DIR" in bash.command


@pytest.mark.parametrize("matcher", ["", "*", None])
def test_an_empty_or_star_matcher_matches_every_tool(matcher) -> None:
    group = {"hooks": [{"type": "command", "command": "true"}]}
    if matcher is not None:
        group["matcher"] = matcher
    [rule] = parse_hooks({"PostToolUse": [group]}, "t")
    assert rule.matches("apply_patch") and rule.matches("mcp__github__create_issue")


def test_a_missing_file_has_no_rules(tmp_path: Path) -> None:
    assert read_hooks_file(tmp_path / "hooks.json") == []


@pytest.mark.parametrize("table, words", [
    ({"PreToolCall": []}, "unknown hook event 'PreToolCall'"),
    ({"PreToolUse": {"matcher": "x"}}, "must be a list"),
    ({"PreToolUse": [{"matcher": "("}]}, "a `hooks` list"),
    ({"PreToolUse": [{"matcher": "(", "hooks": []}]}, "not a valid regular expression"),
    ({"PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "judge"}]}]}, "only \"command\" hooks"),
    ({"PreToolUse": [{"hooks": [{"type": "command"}]}]}, "`command` must be a non-empty string"),
    ({"PreToolUse": [{"hooks": [{"command": "x", "timeout": 0}]}]}, "timeout must be a number"),
    ({"PreToolUse": [{"hooks": [{"command": "x", "timeout": "60"}]}]}, "timeout must be a number"),
])
def test_bad_entries_are_refused_with_the_place_named(table, words) -> None:
    with pytest.raises(ConfigError) as err:
        parse_hooks(table, "/home/me/.config/ctxagent/hooks.json")
    assert words in str(err.value) and "/home/me/.config/ctxagent/hooks.json" in str(err.value)


def test_a_file_that_is_not_json_says_where(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.write_text('{"PreToolUse": [', encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid JSON"):
        read_hooks_file(path)
