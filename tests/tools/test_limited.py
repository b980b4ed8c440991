"""The terminal within a limit (`ctxagent.tools.limited`): a call outside it is refused by its
gate, before any approval question; `restrict` puts the same limit around another terminal,
and limits nested that way allow only what both allow."""

from __future__ import annotations

from pathlib import Path

from ctxagent.tools.limited import LimitedTerminal, TerminalLimit
from ctxagent.tools.terminal import TerminalTool


def test_a_call_outside_the_limit_is_refused_by_its_gate(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("hello\n")
    reading = LimitedTerminal(TerminalTool(tmp_path), TerminalLimit(reading=True), "the sub-agent's definition")
    gate = reading.gate({"command": "touch made.txt", "allow_dangerous": True})
    assert gate is not None and gate.refusal == ("terminal: `touch made.txt` is not allowed by the sub-agent's "
                                                 "definition; allowed: read-only commands")
    assert reading.gate({"command": "cat README.md"}) is None  # the read-only path asks nothing
    assert reading.execute({"command": "cat README.md"}).content.startswith("hello")
    assert not reading.execute({"command": "touch made.txt", "allow_dangerous": True}).ok
    assert not (tmp_path / "made.txt").exists()


def test_restrict_carries_the_limit_to_another_terminal_and_nested_limits_meet(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("hello\n")
    command = LimitedTerminal(TerminalTool(tmp_path), TerminalLimit(["git status:*"]))
    child = command.restrict(LimitedTerminal(TerminalTool(tmp_path), TerminalLimit(reading=True), "the definition"))
    assert child.limit == command.limit and child.source == command.source
    assert "not allowed by this command's allowed-tools" in child.execute({"command": "cat README.md"}).content
    refused = child.gate({"command": "git status", "allow_dangerous": True})  # the command's rule, the inner's refusal
    assert refused is not None and "not allowed by the definition" in refused.refusal
