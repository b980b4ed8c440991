"""A custom command's `allowed-tools` hold for the sub-agents started in its turn (real `ctxagent
chat` in process, fake model): a `general` child, which would have the parent's tools, gets
only the command's (no apply_patch; the terminal within the command's limit, refused without
a question); the next turn, without the command, gives the child apply_patch again."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.slash.conftest import flat
from tests.support.fake_openai import text, tool_calls

SURVEY = """---
allowed-tools: Read, Grep, Glob, Bash(git status:*), delegate
description: Survey the code without changing it
---
Survey $ARGUMENTS and report what you find; change nothing.
"""
PATCH = "*** Begin Patch\n*** Add File: made.txt\n+made\n*** End Patch\n"


def _delegate(task: str) -> dict:
    return tool_calls([("delegate", json.dumps({"agent": "general", "task": task}))])


def _child(server, marker: str) -> list[dict]:
    return [r for r in server.requests if r.get("tools") and any(
        marker in str(m.get("content")) for m in r["messages"] if m["role"] == "user")]


def _names(body: dict) -> list[str]:
    return [t["function"]["name"] for t in body["tools"]]


def _last_result(body: dict) -> str:
    return [m for m in body["messages"] if m["role"] == "tool"][-1]["content"]


def test_a_commands_allowed_tools_bound_the_children_of_its_turn(chat, project: Path) -> None:
    (project / ".claude" / "commands" / "survey.md").write_text(SURVEY, encoding="utf-8")
    child_steps = [tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]),
                   tool_calls([("terminal", json.dumps({"command": "git commit -m x", "allow_dangerous": True}))]),
                   text("## Findings\n- could not write\n## Not finished\n- nothing")]
    rules = [{"contains": "TASK-1", "steps": child_steps},
             {"contains": "TASK-2", "steps": [text("## Findings\n- fine\n## Not finished\n- nothing")]}]
    script = [_delegate("TASK-1: write made.txt"), text("Surveyed."), _delegate("TASK-2: look"), text("Done.")]
    out, server = chat(["/survey src", "again, without the command", "/exit"], script=script, rules=rules)
    assert out.exit_code == 0, out.output
    parent = server.requests[0]
    assert "apply_patch" not in _names(parent) and "delegate" in _names(parent)
    first, second, last = _child(server, "TASK-1")
    assert "apply_patch" not in _names(first) and "terminal" in _names(first)
    terminal = next(t["function"] for t in first["tools"] if t["function"]["name"] == "terminal")
    assert "Here only: git status:* and read-only commands (this command's allowed-tools)" in terminal["description"]
    assert 'no tool named "apply_patch"' in _last_result(second)
    assert "`git commit -m x` is not allowed by this command's allowed-tools" in _last_result(last)
    assert not (project / "made.txt").exists() and "Run? [y]es" not in out.output  # nothing asked, nothing written
    [later] = _child(server, "TASK-2")
    assert "apply_patch" in _names(later)  # the command's limit was for its turn only
    assert "tools for this turn: terminal (only: git status:* and read-only commands), context_fetch, delegate" \
        in flat(out.output)
