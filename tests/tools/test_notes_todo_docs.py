"""docs/notes-todo-plan.md keeps up with the code: its Python blocks run, every action is listed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest

from ctxagent.notes.model import NOTE_TYPES
from ctxagent.tools.notes import NoteParams
from ctxagent.tools.todo import TodoParams
from ctxagent.validation import fields

DOC = (Path(__file__).resolve().parents[2] / "docs" / "notes-todo-plan.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", DOC, re.DOTALL)


class ScriptedClient:
    """Stands in for the model in the plan example: always a valid 5-step plan."""

    def chat(self, messages: list[dict], tools: list | None = None) -> Any:
        steps = [{"title": f"step {i}", "detail": "d", "validation": "v"} for i in range(5)]
        content = json.dumps({"goal": "g", "steps": steps, "risks": ["r"]})
        return type("Reply", (), {"content": content})()


def test_python_blocks_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"client": ScriptedClient()}
    assert len(BLOCKS) == 3
    for block in BLOCKS:
        exec(compile(block, "docs/notes-todo-plan.md", "exec"), namespace)
    assert len(namespace["plan"]["todo_ids"]) == 5


def test_every_action_and_type_is_documented() -> None:
    for params in (NoteParams, TodoParams):
        for action in get_args(next(f.annotation for f in fields(params) if f.name == "action")):
            assert f"| {action}" in DOC or f"({action})" in DOC or f"or {action})" in DOC, action
    for note_type in NOTE_TYPES:
        assert f"`{note_type}`" in DOC
