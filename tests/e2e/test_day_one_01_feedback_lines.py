"""Issue 15, item 1: a refused patch's feedback reaches the model with its lines and indentation.

The real `ctxagent run` against the fake server: the model sends a patch whose context is not
in the file, then one that is not a patch at all; the next requests hold the tool results
exactly as the patch engine wrote them ("Expected these lines" block, numbered nearest
lines, the "Expected form" example), one line each, never joined onto one line.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import model_env
from tests.support.fake_openai import text, tool_calls

WRONG_CONTEXT = ("*** Begin Patch\n*** Update File: src/app.py\n@@\n def greet(name):\n"
                 '-    return "hi " + name\n+    return "Hello, " + name\n*** End Patch\n')
NOT_A_PATCH = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-x\n+y\n"


def tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_refused_patch_feedback_keeps_its_lines(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([tool_calls([("apply_patch", json.dumps({"patch": WRONG_CONTEXT}))]),
                          tool_calls([("apply_patch", json.dumps({"patch": NOT_A_PATCH}))]),
                          text("I could not patch it.")])
    proc = ctxagent("run", "Make the greeting friendlier.", "--repo", str(repo), "--yes",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    requests = server.requests()
    first, second = tool_results(requests[-1])
    lines = first.split("\n")
    assert lines[0].startswith("Error: this apply_patch call was not run")
    expected_at = next(i for i, line in enumerate(lines) if line.endswith("Expected these lines:"))
    # the quoted hunk lines, each on its own indented line, exactly as the file should hold them
    assert lines[expected_at + 1].strip() == "def greet(name):"
    assert lines[expected_at + 2].strip() == 'return "hi " + name'
    assert lines[expected_at + 2].startswith(" ") and lines[expected_at + 2].endswith('return "hi " + name')
    nearest = next(i for i, line in enumerate(lines) if line.startswith("Nearest lines in src/app.py"))
    assert lines[nearest + 1].lstrip().startswith("1 | def greet(name):")
    assert lines[nearest + 2].endswith('2 |     return "hello " + name')  # the file's own indentation
    assert "Expected form:" in second.split("\n")
    form = second.split("\n")[second.split("\n").index("Expected form:"):]
    assert form[1:3] == ["*** Begin Patch", "*** Update File: path/to/file.py"]
    assert " unchanged context line" in form and "-line to remove" in form and "+line to add" in form
