"""Trial of 2026-12-02: `ctxagent checkpoints` at 80 columns wrapped its files column letter
by letter (`M` / `ri` / `ch` / `/f`...), and `undo`'s hint broke its command over two lines.
Below 100 columns each checkpoint is one line of short columns with its files under it, and
the commands to copy are whole lines (real CLI; the fake server as the model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import model_env
from tests.support.fake_openai import text, tool_calls

LONG = "src/a_rather_long_folder_name/and_a_module_name.py"
PATCH = f"*** Begin Patch\n*** Add File: {LONG}\n+x = 1\n*** Update File: src/app.py\n@@ def greet(name):\n" \
        '-    return "hello " + name\n+    return "hi " + name\n*** End Patch\n'


@pytest.mark.parametrize("columns", [60, 80])
def test_checkpoints_and_undo_fit_narrow_terminals(ctxagent, fake_server, repo: Path, columns: int) -> None:
    server = fake_server([tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]), text("done")])
    assert ctxagent("run", "change it", "--repo", str(repo), "--yes", extra_env=model_env(server)).returncode == 0
    narrow = {"COLUMNS": str(columns)}
    listed = ctxagent("checkpoints", "--repo", str(repo), extra_env=narrow)
    assert listed.returncode == 0, listed.stderr
    lines = [line.rstrip() for line in listed.stdout.splitlines()]
    assert all(len(line) <= columns for line in lines), lines
    [session] = [p.stem for p in (repo / ".ctxagent" / "sessions").glob("*.jsonl")]
    assert lines[0].split() == ["#", "when", "session", "turn", "tool", "state"]
    row = lines[1].split()
    assert row[0] == "1" and session in row and row[-1] == "apply_patch"
    assert [lines[2].strip(), lines[3].strip()] == [f"A {LONG}", "M src/app.py"]  # whole, under their row
    assert "  ctxagent checkpoints --restore N" in lines
    undone = ctxagent("undo", "--repo", str(repo), extra_env=narrow)
    assert undone.returncode == 0, undone.stderr
    assert "  ctxagent checkpoints --restore 2" in undone.stdout.splitlines()
    again = ctxagent("checkpoints", "--repo", str(repo), extra_env=narrow).stdout.splitlines()
    assert again[1].split()[-1] == "undone" and again[4].split()[-1] == "undo"


def test_wide_terminals_keep_the_table(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]), text("done")])
    assert ctxagent("run", "change it", "--repo", str(repo), "--yes", extra_env=model_env(server)).returncode == 0
    listed = ctxagent("checkpoints", "--repo", str(repo), extra_env={"COLUMNS": "160"})
    assert f"A {LONG} M src/app.py" in listed.stdout and "┃ files" in listed.stdout
