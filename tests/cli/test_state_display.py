"""`ctxagent notes|todo|memory` draw stored text (which the model or a cloned repo wrote) with
control characters visible and never as rich markup (F8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.tools.memory import MemoryTool
from ctxagent.tools.notes import NoteTool
from ctxagent.tools.todo import TodoTool
from tests.cli.test_safe_text import _raw_unsafe
from tests.support.cli import invoke

EVIL = "fix\x1b]0;PWNED\x07\x1b[2K [bold red]now[/] [link=https://evil.example]x[/link]"
SHOWN = "fix\\x1b]0;PWNED\\x07\\x1b[2K [bold red]now[/] [link=https://evil.example]x[/link]"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COLUMNS", "250")
    note_id = NoteTool.for_repo(tmp_path).run({"action": "create", "title": EVIL, "content": f"body {EVIL}",
                                               "tags": ["t\x1b[31m"]})
    (tmp_path / "note_id").write_text(note_id)
    TodoTool.for_repo(tmp_path).run({"action": "add", "content": EVIL})
    with MemoryTool.for_repo(tmp_path, embedder=None).store as store:
        store.add(EVIL, "semantic")
    return tmp_path


@pytest.mark.parametrize("args", [["notes", "list"], ["notes", "show", "@id"], ["notes", "search", "fix"],
                                  ["todo", "list"], ["memory", "list"], ["memory", "search", "fix"]])
def test_control_chars_and_markup_in_stored_state_are_shown_not_obeyed(repo: Path, args: list[str]) -> None:
    args = [(repo / "note_id").read_text() if a == "@id" else a for a in args]
    out = invoke([*args, "--repo", str(repo)])
    assert out.exit_code == 0, out.output
    assert _raw_unsafe(out.stdout) == []
    assert SHOWN in out.stdout
