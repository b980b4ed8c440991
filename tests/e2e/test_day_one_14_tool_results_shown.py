"""Issue 15, item 14: the terminal shows what matters of each tool result (real `ctxagent run`).

A patch shows its per-file summary (`M path (+N -M)`), a refused call its whole error, a todo
change the board, and an auto-approved diff longer than 40 lines is folded (`... +N lines`).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import model_env
from tests.support.fake_openai import text, tool_calls

BIG = "".join(f"+line {i}\n" for i in range(60))
ADD_AND_UPDATE = ("*** Begin Patch\n*** Add File: big.txt\n" + BIG + "*** Update File: src/app.py\n"
                  '@@ def greet(name):\n-    return "hello " + name\n+    return "Hello, " + name\n*** End Patch\n')
WRONG = ("*** Begin Patch\n*** Update File: README.md\n@@\n-This line is not in the README at all.\n"
         "+x\n*** End Patch\n")


def test_patch_summary_whole_error_board_and_folded_diff(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([
        tool_calls([("apply_patch", json.dumps({"patch": ADD_AND_UPDATE}))]),
        tool_calls([("apply_patch", json.dumps({"patch": WRONG}))]),
        tool_calls([("todo", json.dumps({"action": "add", "content": "write the tests"}))]),
        tool_calls([("todo", json.dumps({"action": "add", "content": "update the docs"}))]),
        text("Done."),
    ])
    proc = ctxagent("run", "Do it.", "--repo", str(repo), "--yes", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    # the patch: one line per file with its counts, no "Patch applied (2 files): (+2 lines)"
    assert "  ✓ A big.txt (+60 -0)" in lines and "    M src/app.py (+1 -1)" in lines
    assert "Patch applied" not in proc.stdout
    # the auto-approved diff: its first 40 lines, then the count of the rest
    assert "+line 30" in proc.stdout and "+line 59" not in proc.stdout
    assert any(line.startswith("... +") and line.endswith(" lines") for line in lines)
    # the refused patch: every line of the reason, not 100 characters of it
    error_at = next(i for i, line in enumerate(lines) if line.startswith("  ✗ Error: this apply_patch call"))
    error = "\n".join(lines[error_at:error_at + 12])
    assert "This line is not in the README at all." in error
    assert "Nearest lines in README.md" in error and "Re-read the file" in error
    # the todo changes: the board after each change
    assert "    todo board: 0/2 completed" in lines
    assert "    [ ] 1 write the tests" in lines and "    [ ] 2 update the docs" in lines
