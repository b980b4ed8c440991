"""Trial of 2026-12-02: a grep with one hit (and the note that `.ctxagent/` was left out)
showed `(+1 lines)`; one more line is `(+1 line)`, and a fold never hides a single line
(real CLI, the fake server as the model)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import model_env
from tests.support.fake_openai import text, tool_calls


def test_one_more_line_is_singular(ctxagent, fake_server, repo: Path) -> None:
    (repo / ".ctxagent").mkdir(exist_ok=True)
    (repo / ".ctxagent" / "old.txt").write_text("def greet copy\n", encoding="utf-8")
    server = fake_server([tool_calls([("terminal", json.dumps({"command": "grep -rn 'def greet' ."}))]),
                          tool_calls([("terminal", json.dumps({"command": "cat src/app.py README.md"}))]),
                          text("found")])
    proc = ctxagent("run", "where is greet?", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "./src/app.py:1:def greet(name):  (+1 line)\n" in proc.stdout
    assert "(+1 lines)" not in proc.stdout
    assert 'def greet(name):  (+8 lines)' in proc.stdout  # app.py's 6 lines and README's 3
