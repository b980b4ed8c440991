"""Issue 15, item 15: `inspect` and chat `/context` stay readable at 80 and 60 columns (real CLI).

Every line fits the terminal, every packet's reason is one whole line (never a column wrapped
letter by letter), every packet's full id is shown, and the layer chart's numbers are whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import model_env
from tests.support.fake_openai import text, tool_calls

NOTE = {"action": "create", "title": "where greet lives", "content": "greet(name) is defined in src/app.py"}


def session(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([tool_calls([("terminal", json.dumps({"command": "cat src/app.py"}))]),
                          tool_calls([("note", json.dumps(NOTE))]), text("It greets.")])
    proc = ctxagent("run", "What does the program do? Explain greet.", "--repo", str(repo), "--yes",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr


def assert_readable(out: str, report: dict, columns: int) -> None:
    lines = [line.rstrip() for line in out.split("\n")]
    assert all(len(line) <= columns for line in lines), [line for line in lines if len(line) > columns]
    stripped = [line.strip() for line in lines]
    packets = report["packets"]
    assert packets
    for packet in packets:
        reason, pid = packet["reason"], packet["id"]
        assert reason in stripped or f"{pid}: {reason}" in stripped, (reason, out)
        assert any(line.startswith(pid) for line in stripped) or f"{pid}: {reason}" in stripped
    budget = report["budget"]
    assert any(line.startswith("input budget") and line.split()[-1] == str(budget["input_budget"]) for line in stripped)


@pytest.mark.parametrize("columns", [80, 60])
def test_inspect_fits_narrow_terminals(ctxagent, fake_server, repo: Path, columns: int) -> None:
    session(ctxagent, fake_server, repo)
    report = json.loads(ctxagent("inspect", "last", "--repo", str(repo), "--json").stdout)["report"]
    proc = ctxagent("inspect", "last", "--repo", str(repo), extra_env={"COLUMNS": str(columns)})
    assert proc.returncode == 0, proc.stderr
    assert_readable(proc.stdout.split("used ", 1)[1], report, columns)


def test_chat_context_fits_sixty_columns(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([tool_calls([("note", json.dumps(NOTE))]), text("noted")])
    proc = ctxagent("chat", "--repo", str(repo), input="remember where greet lives\n/context\n",
                    extra_env={**model_env(server), "COLUMNS": "60"})
    assert proc.returncode == 0, proc.stderr
    shown = proc.stdout.split("next model call", 1)[1]
    shown = shown.split("is saved; resume it with", 1)[0]  # the closing resume line is a command to copy, not wrapped
    lines = [line.rstrip() for line in shown.split("\n")]
    assert all(len(line) <= 60 for line in lines), [line for line in lines if len(line) > 60]
    assert any(line.strip().startswith("id ") and "decision" in line for line in lines)
    assert any(line.strip() == "kept verbatim" for line in lines)
