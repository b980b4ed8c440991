"""The terminal renderer and the JSON-lines sink, fed real events."""

from __future__ import annotations

import io
import json

from rich.console import Console

from ctxagent.agent.events import (ApprovalRequest, ErrorEvent, TextDelta, ToolCallEvent, ToolResultEvent, TurnEnd,
                                   TurnStart)
from ctxagent.cli.jsonout import JsonLinesSink
from ctxagent.cli.render import RichRenderer, diff_text, short_args, usage_line


def render(*events) -> str:
    console = Console(file=io.StringIO(), width=100, force_terminal=False)
    renderer = RichRenderer(console)
    for event in events:
        renderer(event)
    return console.file.getvalue()


def test_short_args_shows_command_patched_files_or_compact_json() -> None:
    assert short_args("terminal", '{"command": "ls -la"}') == "ls -la"
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** Add File: b.py\n+z\n*** End Patch"
    assert short_args("apply_patch", json.dumps({"patch": patch})) == "U a.py, A b.py"
    assert short_args("x", '{"a": 1}') == '{"a": 1}'
    assert short_args("x", '{"broken') == '{"broken'
    assert len(short_args("x", json.dumps({"a": "y" * 500}))) == 100


def test_a_turn_renders_text_tool_lines_and_usage() -> None:
    out = render(TurnStart(session_id="s", turn=1, task="t"), TextDelta(text="Looking."),
                 ToolCallEvent(call_id="c", name="terminal", arguments='{"command": "ls"}', step=1),
                 ToolResultEvent(call_id="c", name="terminal", ok=True, content="a\nb\nc"),
                 ToolResultEvent(call_id="d", name="terminal", ok=False, content="refused: rm"),
                 TurnEnd(reason="max_steps", message="stopped after 3", steps=3, tokens=1234, elapsed_s=2.0))
    assert "Looking.\n▸ terminal  ls" in out
    assert "✓ a  (+2 lines)" in out and "✗ refused: rm" in out
    assert "max_steps: stopped after 3" in out and "steps 3 · 1,234 tokens · 2.0 s · session s" in out


def test_approval_diff_is_shown_and_errors_escaped() -> None:
    out = render(ApprovalRequest(call_id="c", name="apply_patch", preview="--- a/x\n+++ b/x\n-[old]\n+[new]\n"),
                 ErrorEvent(message="bad [markup] here"))
    assert "-[old]" in out and "+[new]" in out and "bad [markup] here" in out


def test_diff_colours_by_line() -> None:
    styles = {span.style for span in diff_text("+a\n-b\n@@ c\n x\n").spans}
    assert {"green", "red", "cyan"} <= styles


def test_usage_line_with_cost() -> None:
    assert usage_line(TurnEnd(reason="finished", steps=1, tokens=10, cost_usd=0.5, elapsed_s=1)) == \
        "steps 1 · 10 tokens · $0.5000 · 1.0 s"


def test_json_sink_writes_one_parsable_line_per_event_with_secrets_redacted() -> None:
    stream = io.StringIO()
    sink = JsonLinesSink(stream, secrets=["sk-secret-123456"])
    sink(TextDelta(text="key sk-secret-123456"))
    sink(TurnEnd(reason="finished", answer="ok"))
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert lines[0] == {"type": "text_delta", "text": "key [REDACTED]"}
    assert lines[1]["type"] == "turn_end" and lines[1]["answer"] == "ok"
