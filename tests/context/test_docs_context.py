"""docs/context.md cannot drift: its command help blocks are generated from the code
(regenerate: `python -m tests.context.test_docs_context --write`), and its Python
examples run."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tests.cli.test_docs import BLOCK, regenerate

DOC = Path(__file__).resolve().parents[2] / "docs" / "context.md"


def test_help_blocks_match_the_code() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert {(m.group(2), m.group(3)) for m in BLOCK.finditer(text)} == {("help", "context"), ("help", "inspect")}
    assert regenerate(text) == text, "docs/context.md is stale: run python -m tests.context.test_docs_context --write"


def test_python_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert blocks
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), {})


if __name__ == "__main__" and "--write" in sys.argv:
    DOC.write_text(regenerate(DOC.read_text(encoding="utf-8")), encoding="utf-8")
