"""Issue 17 terminal cases S10 and S12 through the tool, in the refusal corpus style
of test_cases.py (S4: test_programs.py; S11: tests/fetch; S13: test_parse.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.shell.parse import MAX_STAGES
from tests.shell.test_cases import _assert_allowed, _assert_refused, _tool

OUTSIDE_NAME = "OUTSIDE_SECRET_NAME"


def _with_outside(tmp_path: Path):
    tool, ws = _tool(tmp_path)
    out = tmp_path / "outside"
    out.mkdir()
    (out / f"{OUTSIDE_NAME}.txt").write_text("secret\n")
    (ws / "link_to_outside").symlink_to(out)
    return tool, ws


S10_REJECTED = [
    "ls */../../outside/*",
    "cat src/*/../../../outside/*",
    "cat */../../outside/OUTSIDE_SECRET_NAME.txt",
    "ls ?rc/../../outside",
    "ls [s]rc/../..",
    "cat */..",
    "wc -l link_to_outside/*",
    "cat link_to_*/*.txt",
    "grep -r secret l*/",
]


@pytest.mark.parametrize("command", S10_REJECTED)
@pytest.mark.parametrize("sandbox", [False, None])
def test_s10_glob_walking_outside_is_refused_without_naming_outside_paths(tmp_path, command, sandbox):
    tool, ws = _with_outside(tmp_path)
    tool = type(tool)(workspace=ws, timeout=10, sandbox=sandbox)
    _assert_refused(tool, ws, command, "not allowed")
    content = tool.execute({"command": command}).content
    for word in command.split():  # the refusal may quote the pattern itself
        content = content.replace(word, "")
    assert OUTSIDE_NAME not in content and str(tmp_path / "outside") not in content


S10_ALLOWED = [
    ("ls src/../src/*.py", "main.py"),
    ("cat ./src/../*.txt", "b 2"),
    ("ls s*", "main.py"),
    ("cat src/*.py", "def main"),
]


@pytest.mark.parametrize("command,expect", S10_ALLOWED)
def test_s10_globs_inside_still_expand(tmp_path, command, expect):
    _assert_allowed(_with_outside(tmp_path)[0], command, expect)


@pytest.mark.parametrize("sandbox", [False, None])
def test_s12_a_pipeline_of_too_many_stages_starts_nothing(tmp_path, sandbox):
    tool, ws = _tool(tmp_path, sandbox=sandbox)
    command = "cat a.txt" + " | cat" * 6000
    _assert_refused(tool, ws, command, "the limit is")
    _assert_refused(tool, ws, "cat a.txt" + " | cat" * MAX_STAGES, "stages")
    assert tool.run({"command": "cat a.txt" + " | cat" * (MAX_STAGES - 1)}).startswith("b 2")


def test_s12_an_overlong_command_is_refused(tmp_path):
    tool, ws = _tool(tmp_path)
    _assert_refused(tool, ws, "grep " + "x" * 9000 + " a.txt", "characters")
