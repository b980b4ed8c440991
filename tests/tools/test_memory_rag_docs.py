"""docs/memory-rag.md keeps up with the code: its Python blocks run, every action is listed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args

import pytest

from ctxagent.tools.memory import MemoryParams
from ctxagent.tools.rag import RAGParams
from ctxagent.validation import fields

DOC = (Path(__file__).resolve().parents[2] / "docs" / "memory-rag.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", DOC, re.DOTALL)


def test_python_blocks_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    assert len(BLOCKS) == 2
    for block in BLOCKS:
        exec(compile(block, "docs/memory-rag.md", "exec"), namespace)
    assert (tmp_path / ".ctxagent" / "memory.db").exists()
    assert namespace["hit"]["heading"] == "Deploy > Rollback"


def test_every_action_and_cli_command_is_documented() -> None:
    actions = list(get_args(next(f.annotation for f in fields(MemoryParams) if f.name == "action")))
    actions += [a for a in get_args(next(f.annotation for f in fields(RAGParams) if f.name == "action")) if a != "ask"]
    for action in actions:
        assert f"| `{action}` |" in DOC, action
    from ctxagent.cli.memory_cmd import memory_group

    for name in memory_group.commands:
        assert f"ctxagent memory {name}" in DOC or f"| {name}" in DOC or f"memory {name}" in DOC, name
