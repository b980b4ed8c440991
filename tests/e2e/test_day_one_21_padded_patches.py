"""Issue 15, item 21: padded patch markers and headers, and a `Move to:` naming the file's own
path, through the real CLI (`ctxagent apply`, and the model's `apply_patch` in `ctxagent run`)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import APP_PY, model_env
from tests.support.fake_openai import text, tool_calls

PADDED = ("*** Begin Patch \n  *** Update File: src/app.py\n@@ def greet(name):\n"
          '-    return "hello " + name\n+    return "Hello, " + name\n'
          "  *** Add File: notes.md\n+first note\n *** End Patch\n")
SELF_MOVE = ("*** Begin Patch\n*** Update File: README.md\n*** Move to: ./README.md\n@@\n"
             "-A tiny greeting program.\n+A tiny, friendly greeting program.\n*** End Patch\n")


def test_apply_accepts_padded_markers_and_headers(ctxagent, repo: Path) -> None:
    proc = ctxagent("apply", "-", "--repo", str(repo), "--yes", input=PADDED)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "src" / "app.py").read_text(encoding="utf-8") == APP_PY.replace('"hello "', '"Hello, "')
    assert (repo / "notes.md").read_text(encoding="utf-8") == "first note\n"


def test_move_to_the_files_own_path_is_applied_as_an_update(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([tool_calls([("apply_patch", json.dumps({"patch": SELF_MOVE}))]), text("Done.")])
    proc = ctxagent("run", "Reword the README.", "--repo", str(repo), "--yes", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert (repo / "README.md").read_text(encoding="utf-8") == "# proj\n\nA tiny, friendly greeting program.\n"
    [result] = [m["content"] for m in server.requests()[-1]["messages"] if m["role"] == "tool"]
    assert "M README.md (+1 -1)" in result.split("\n")
    assert "already exists" not in result + proc.stdout + proc.stderr
