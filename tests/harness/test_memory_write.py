"""The memory files' appends: dated entries to Memory.md, skill blocks to CustomSkill.md,
duplicates refused, nothing before the entry ever changed; the memory_file tool's preview."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from ctxagent.errors import ToolInputError
from ctxagent.harness.memory_write import learn, remember
from ctxagent.harness.profile import load_profile
from ctxagent.tools.memory_file import MemoryFileTool

DAY = dt.date(2026, 12, 2)


def test_remember_appends_a_dated_entry_and_keeps_every_byte_before_it(tmp_path: Path) -> None:
    path = tmp_path / ".ctxagent" / "Memory.md"
    path.parent.mkdir()
    old = b"# mine\r\n- hand-written, no final newline"
    path.write_bytes(old)
    remember(path, "The user prefers tabs in Makefiles", day=DAY)
    data = path.read_bytes()
    assert data.startswith(old) and data.endswith(b"\n- 2026-12-02: The user prefers tabs in Makefiles\n")


def test_a_missing_file_starts_with_a_heading(tmp_path: Path) -> None:
    done = remember(tmp_path / ".ctxagent" / "Memory.md", "a\nb", day=DAY)
    assert done.path.read_text() == "# Long-term memory\n- 2026-12-02: a\n  b\n"


def test_an_entry_already_there_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    path = tmp_path / ".ctxagent" / "Memory.md"
    remember(path, "Deploy with uv", day=DAY)
    before = path.read_bytes()
    with pytest.raises(ToolInputError, match="already in"):
        remember(path, "  deploy   WITH uv ", day=DAY + dt.timedelta(days=1))
    remember(path, "Never deploy with uv on Fridays", day=DAY)  # containing the words is not the same entry
    assert path.read_bytes().startswith(before)


def test_learn_appends_a_skill_block_and_refuses_the_same_title(tmp_path: Path) -> None:
    path = tmp_path / ".ctxagent" / "CustomSkill.md"
    learn(path, "Release a version", "when the user asks to release", "1. bump\n2. tag", day=DAY)
    text = path.read_text()
    assert "## Release a version\n\nWhen to use: when the user asks to release\n\nHow:\n1. bump\n2. tag" in text
    assert "(learned 2026-12-02)" in text
    with pytest.raises(ToolInputError, match="already in"):
        learn(path, "release a  VERSION", "w", "h", day=DAY)
    assert path.read_text() == text


def test_the_tool_previews_what_it_appends_and_needs_approval(tmp_path: Path) -> None:
    tool = MemoryFileTool(workspace=tmp_path)
    assert tool.needs_approval and tool.writes_state
    preview = tool.preview({"action": "remember", "content": "CI runs on 3.10"})
    assert preview.startswith(f"append to {tmp_path / '.ctxagent' / 'Memory.md'}:\n+- ")
    assert not (tmp_path / ".ctxagent" / "Memory.md").exists(), "a preview writes nothing"
    assert tool.execute({"action": "remember", "content": "CI runs on 3.10"}).ok
    again = tool.execute({"action": "remember", "content": "CI runs on 3.10"})
    assert not again.ok and "already in" in again.content
    missing = tool.execute({"action": "learn", "title": "x"})
    assert not missing.ok and "`when` is required" in missing.content


def test_an_entry_holding_a_comment_marker_hides_neither_itself_nor_later_entries(tmp_path: Path) -> None:
    path = tmp_path / ".ctxagent" / "Memory.md"
    remember(path, "Use <!-- in HTML templates for comments", day=DAY)
    remember(path, "Deploy with make ship", day=DAY)
    learn(tmp_path / ".ctxagent" / "CustomSkill.md", "Docs", "when a page ends in -->", "close it", day=DAY)
    [memory] = [f for f in load_profile(tmp_path, None)[0] if f.path.name == "Memory.md"]
    assert "HTML templates" in memory.text and "make ship" in memory.text
    with pytest.raises(ToolInputError):
        remember(path, "use <!-- in html templates for comments", day=DAY)
