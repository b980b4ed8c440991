"""Warnings from our own code reach CLI users as one clean `warning: ...` line each (F12)."""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import pytest

from ctxagent.cli.warn import cli_warnings, show_warning
from tests.support.cli import invoke

BAD_YAML = "---\ntitle: [unclosed\ntype: x: y\n---\nbody\n"


def _assert_clean_warning_lines(stderr: str) -> list[str]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines, "expected a warning"
    for line in lines:
        assert line.startswith("warning: "), line
        assert "UserWarning" not in line and ".py:" not in line and "<unicode string>" not in line
        assert "\x1b" not in line
    return lines


@pytest.mark.parametrize("args", [["tool", "todo", '{"action": "list"}'], ["todo", "list"],
                                  ["tool", "todo", '{"action": "list"}', "--json"]])
def test_corrupt_state_warnings_are_one_clean_line(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / ".ctxagent").mkdir()
    (tmp_path / ".ctxagent" / "todos.json").write_text("{bad", encoding="utf-8")
    out = invoke([*args, "--repo", str(tmp_path)])
    assert out.exit_code == 0, out.output
    [line] = _assert_clean_warning_lines(out.stderr)
    assert "todos.json" in line


@pytest.mark.parametrize("args", [["notes", "list"], ["notes", "search", "body"], ["tool", "note", '{"action": "list"}']])
def test_bad_yaml_front_matter_is_one_warning_naming_the_file(tmp_path: Path, args: list[str]) -> None:
    notes = tmp_path / ".ctxagent" / "notes"
    notes.mkdir(parents=True)
    (notes / "note_20250101_000000_abcdef.md").write_text(BAD_YAML, encoding="utf-8")
    out = invoke([*args, "--repo", str(tmp_path)])
    assert out.exit_code == 0, out.output
    lines = _assert_clean_warning_lines(out.stderr)
    [yaml_line] = [line for line in lines if "front matter" in line]
    assert str(notes / "note_20250101_000000_abcdef.md") in yaml_line and "line 3, column 5" in yaml_line


def test_a_multi_line_warning_with_control_chars_is_one_visible_line() -> None:
    stream = io.StringIO()
    show_warning(UserWarning("while parsing\n  in \"<x>\", line 1\n\x1b[2Jcleared"), UserWarning, "/a/b.py", 207,
                 stream, "source line")
    assert stream.getvalue() == 'warning: while parsing in "<x>", line 1 \\x1b[2Jcleared\n'


def test_cli_warnings_show_each_message_once_and_restore_the_handler(capsys) -> None:
    before = warnings.showwarning
    with cli_warnings():
        for _ in range(3):
            warnings.warn("index rebuilt", stacklevel=1)
        warnings.warn("another file set aside", stacklevel=1)
    assert warnings.showwarning is before
    assert capsys.readouterr().err == "warning: index rebuilt\nwarning: another file set aside\n"
