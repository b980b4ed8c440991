"""Hook commands really run: the event's JSON on stdin, exit 0 / 2 / other read as Claude Code
reads them, a hang killed with its process group at the timeout, no API key in their
environment or in what they print."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ctxagent.harness.hooks import HookRule, Hooks

SECRET = "sk-hooktest-0123456789abcdefSECRET"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hooks"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="hooks run under bash")


def _hooks(tmp_path: Path, *rules: tuple[str, str | None, str], timeout: float = 20, env=None) -> Hooks:
    made = [HookRule(event=e, matcher=m, command=c, timeout_s=timeout, source="test") for e, m, c in rules]
    base = {"PATH": os.environ["PATH"], "MY_KEY": SECRET, "KEEP": "visible"} if env is None else env
    return Hooks(made, repo=tmp_path, session_id="s1", transcript_path=str(tmp_path / "t.jsonl"), secrets=[SECRET],
                 env=base)


def test_the_event_arrives_on_stdin_with_the_common_fields(tmp_path: Path) -> None:
    hooks = _hooks(tmp_path, ("PreToolUse", "apply_patch", "cat > payload.json"))
    hooks.fire("PreToolUse", "apply_patch", tool_name="apply_patch", tool_input={"patch": "*** Begin Patch"})
    payload = json.loads((tmp_path / "payload.json").read_text())
    assert payload == {"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(tmp_path),
                       "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
                       "tool_input": {"patch": "*** Begin Patch"}}


def test_only_matching_rules_run(tmp_path: Path) -> None:
    hooks = _hooks(tmp_path, ("PreToolUse", "terminal", "touch terminal.ran"), ("PreToolUse", "apply_.*", "touch patch.ran"))
    hooks.fire("PreToolUse", "apply_patch", tool_name="apply_patch", tool_input={})
    assert (tmp_path / "patch.ran").exists() and not (tmp_path / "terminal.ran").exists()


def test_exit_2_blocks_with_stderr_as_the_reason(tmp_path: Path) -> None:
    hooks = _hooks(tmp_path, ("PreToolUse", None, f"python3 {FIXTURES / 'protect_paths.py'}"))
    result = hooks.fire("PreToolUse", "apply_patch", tool_input={"patch": "*** Update File: src/app.py\n"})
    assert result.blocked and result.reason.startswith("src/app.py is frozen by the release process")
    assert not hooks.fire("PreToolUse", "apply_patch", tool_input={"patch": "*** Update File: README.md\n"}).blocked


@pytest.mark.parametrize("stdout, blocked, permission", [
    ('{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", '
     '"permissionDecisionReason": "no patches on Fridays"}}', True, None),
    ('{"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "docs only"}}', False, "allow"),
    ('{"permissionDecision": "ask"}', False, "ask"),
    ('{"decision": "block", "reason": "no patches on Fridays"}', True, None),
    ('{"decision": "approve"}', False, "allow"),
    ("plain text is not a decision", False, None),
])
def test_json_on_stdout_carries_the_decision(tmp_path: Path, stdout, blocked, permission) -> None:
    (tmp_path / "out.txt").write_text(stdout)
    result = _hooks(tmp_path, ("PreToolUse", None, "cat out.txt")).fire("PreToolUse", "apply_patch")
    assert (result.blocked, result.permission) == (blocked, permission)
    if blocked:
        assert result.reason == "no patches on Fridays"


def test_deny_wins_over_allow_and_reasons_are_joined(tmp_path: Path) -> None:
    (tmp_path / "allow.json").write_text('{"permissionDecision": "allow"}')
    hooks = _hooks(tmp_path, ("PreToolUse", None, "cat allow.json"), ("PreToolUse", None, "echo first >&2; exit 2"),
                   ("PreToolUse", None, "echo second >&2; exit 2"))
    result = hooks.fire("PreToolUse", "terminal")
    assert result.blocked and result.reason == "first\nsecond" and result.permission is None


def test_another_exit_code_is_a_warning_and_the_agent_goes_on(tmp_path: Path) -> None:
    result = _hooks(tmp_path, ("PostToolUse", None, "echo 'jq: command not found' >&2; exit 127")).fire("PostToolUse", "x")
    assert not result.blocked and "failed (exit 127): jq: command not found; going on" in result.warning


def test_plain_stdout_is_context_only_where_claude_code_makes_it_context(tmp_path: Path) -> None:
    for event, kept in (("UserPromptSubmit", True), ("SessionStart", True), ("PostToolUse", False)):
        result = _hooks(tmp_path, (event, None, "echo 'branch: release-2.1'")).fire(event, None)
        assert result.context == (["branch: release-2.1"] if kept else [])


def test_a_hook_that_hangs_is_killed_with_what_it_started(tmp_path: Path) -> None:
    hooks = _hooks(tmp_path, ("Stop", None, "sleep 300 & echo $! > child.pid; wait"), timeout=1)
    result = hooks.fire("Stop", None)
    assert "killed after its 1 s timeout" in result.warning and not result.blocked
    pid = int((tmp_path / "child.pid").read_text())
    stat = Path(f"/proc/{pid}/stat")
    assert not stat.exists() or stat.read_text().split(") ")[1].startswith("Z")  # gone (or a zombie awaiting init)


def test_no_api_key_in_the_environment_and_none_in_what_comes_back(tmp_path: Path) -> None:
    hooks = _hooks(tmp_path, ("SessionStart", None, f"env > env.txt; echo 'the key is {SECRET}'"))
    result = hooks.fire("SessionStart", "startup", source="startup")
    env = (tmp_path / "env.txt").read_text()
    assert SECRET not in env and "KEEP=visible" in env
    assert f"CLAUDE_PROJECT_DIR={tmp_path}" in env and f"CTXAGENT_PROJECT_DIR={tmp_path}" in env
    assert result.context and SECRET not in result.context[0] and "[REDACTED]" in result.context[0]


def test_continue_false_stops(tmp_path: Path) -> None:
    (tmp_path / "stop.json").write_text('{"continue": false, "stopReason": "the build is red"}')
    result = _hooks(tmp_path, ("UserPromptSubmit", None, "cat stop.json")).fire("UserPromptSubmit", None, prompt="x")
    assert result.stop and result.reason == "the build is red"


def test_a_subagents_events_name_it_and_subagent_stop_matches_its_type(tmp_path: Path) -> None:
    """Inside a sub-agent every payload adds Claude Code's `agent_id` and `agent_type` (and the
    child's transcript); the session's fields stay; SubagentStop's matcher is the agent type."""
    hooks = _hooks(tmp_path, ("PreCompact", "auto", "cat > compact.json"), ("SubagentStop", "explore", "touch explore.ran"),
                   ("SubagentStop", "general", "touch general.ran"))
    child = hooks.for_subagent("s1.explore-1", "explore", str(tmp_path / "s1" / "s1.explore-1.jsonl"))
    assert child.pre_compact("auto").notices == [] and child.pre_compact("auto").blocked is None
    payload = json.loads((tmp_path / "compact.json").read_text())
    assert payload == {"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(tmp_path),
                       "hook_event_name": "PreCompact", "agent_id": "s1.explore-1", "agent_type": "explore",
                       "agent_transcript_path": str(tmp_path / "s1" / "s1.explore-1.jsonl"), "trigger": "auto",
                       "custom_instructions": ""}
    child.fire("SubagentStop", None, stop_hook_active=False, last_assistant_message="done")
    assert (tmp_path / "explore.ran").exists() and not (tmp_path / "general.ran").exists()
    hooks.pre_compact("auto")
    assert "agent_id" not in json.loads((tmp_path / "compact.json").read_text())  # the parent's own events do not
