"""`result_lines`, `fold` and the renderer's tool-result lines (issue 15, item 14)."""

from __future__ import annotations

import io

from rich.console import Console

from ctxagent.agent.events import ApprovalRequest, ToolResultEvent
from ctxagent.cli.render import RichRenderer
from ctxagent.cli.results import FOLD, fold, result_lines


def shown(*events, width: int = 80) -> str:
    console = Console(file=io.StringIO(), width=width, force_terminal=False)
    renderer = RichRenderer(console)
    for event in events:
        renderer(event)
    return console.file.getvalue()


def test_a_patch_shows_one_line_per_file_without_the_header() -> None:
    content = "Patch applied (3 files):\nM rich/filesize.py (+21 -0)\nA notes.md (+1 -0)\nR a.py -> b.py (+0 -0)"
    assert result_lines("apply_patch", True, content) == ["M rich/filesize.py (+21 -0)", "A notes.md (+1 -0)",
                                                          "R a.py -> b.py (+0 -0)"]
    with_warning = "Patch applied (1 file):\nD old.txt (+0 -3)\nwarning: checkpoint slow"
    assert result_lines("apply_patch", True, with_warning)[-1] == "warning: checkpoint slow"


def test_a_failure_shows_every_line_and_folds_past_the_limit() -> None:
    reason = "Error: " + "x" * 300 + "\n  quoted line\nlast line"
    assert result_lines("terminal", False, reason) == reason.split("\n")
    long = "\n".join(f"l{i}" for i in range(FOLD + 7))
    assert result_lines("terminal", False, long)[-1] == "... +7 lines"
    assert len(result_lines("terminal", False, long)) == FOLD + 1


def test_a_todo_change_shows_the_board_and_a_listing_one_line() -> None:
    change = "updated item 2\ntodo board: 1/2 completed\n[x] 1 a\n[>] 2 b (in progress)"
    assert result_lines("todo", True, change) == change.split("\n")
    listing = "todo board: 1/2 completed\n[x] 1 a\n[ ] 2 b"
    assert result_lines("todo", True, listing) == ["todo board: 1/2 completed  (+2 lines)"]


def test_other_results_show_their_first_line_cut() -> None:
    assert result_lines("terminal", True, "a\nb\nc\n") == ["a  (+2 lines)"]
    assert result_lines("terminal", True, "y" * 300)[0].endswith("…")
    assert result_lines("terminal", True, "") == [""]


def test_fold_keeps_short_lists() -> None:
    assert fold(["a", "b"], 2) == ["a", "b"] and fold(["a", "b", "c"], 2) == ["a", "b", "c"]
    assert fold(["a", "b", "c", "d"], 2) == ["a", "b", "... +2 lines"]


def test_rendered_lines_wrap_under_the_text_with_nothing_after_them() -> None:
    out = shown(ToolResultEvent(call_id="c", name="apply_patch", ok=False,
                                content="Error: " + "word " * 30 + "\n    def f():"), width=60)
    lines = out.rstrip("\n").split("\n")
    assert lines[0].startswith("  ✗ Error: word") and lines[1].startswith("    word")
    assert lines[-1] == "        def f():"
    assert all(len(line) <= 60 and line == line.rstrip() for line in lines)


def test_an_auto_approved_long_diff_is_folded_and_an_asked_one_is_whole() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1,0 +1,60 @@\n" + "".join(f"+{i}\n" for i in range(60))
    auto = shown(ApprovalRequest(call_id="c", name="apply_patch", preview=diff, auto=True))
    assert "+36\n" in auto and "+37\n" not in auto and f"... +{63 - FOLD} lines" in auto
    asked = shown(ApprovalRequest(call_id="c", name="apply_patch", preview=diff, auto=False))
    assert "+59\n" in asked and "... +" not in asked
