"""docs/compaction.md cannot drift: its Python examples run, and its settings table
lists every CompactionConfig field with its default."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from ctxagent.context.compaction.compactor import CompactionConfig

DOC = Path(__file__).resolve().parents[2] / "docs" / "compaction.md"


def test_python_examples_run(capsys) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert blocks
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), {})
    assert "messages summarized" in capsys.readouterr().out


def test_settings_table_matches_the_config() -> None:
    text = DOC.read_text(encoding="utf-8")
    for field in dataclasses.fields(CompactionConfig):
        default = "none" if field.default is None else str(field.default)
        assert re.search(rf"\| `compaction_{field.name}` \| {re.escape(default)} \|", text), field.name
