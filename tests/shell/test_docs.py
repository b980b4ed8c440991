"""The Python example in docs/terminal.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "terminal.md"


def test_doc_example_runs(tmp_path, monkeypatch, capsys):
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S).group(1)
    (tmp_path / "a.py").write_text("# TODO: one\n")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(DOC), "exec"), {})
    out = capsys.readouterr().out
    assert "a.py" in out and "./a.py:1:# TODO: one" in out and "'rm' is not allowed" in out
