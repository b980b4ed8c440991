"""The report views at any width (issue 15, item 15): chart bars shrink, packets go to two
lines under NARROW_COLUMNS, nothing is wrapped letter by letter or cut from a number."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from ctxagent.cli.report_view import NARROW_COLUMNS, draw_report, packet_table

REASON = "over the history budget: 3,412 tokens left and this message needs 9,876"
REPORT = {
    "budget": {"used_tokens": 6587, "input_budget": 123904, "max_tokens": 128000, "reserve_tokens": 4096,
               "unused_tokens": 117317, "tools_tokens": 5682},
    "layers": {"system": {"used": 755, "budget": 755, "fixed": True},
               "history": {"used": 120, "budget": 55510}, "evidence": {"used": 99999, "budget": 46464}},
    "packets": [{"id": "note:note_20261202_095606_0251a4", "layer": "evidence", "tokens": 25, "relevance": 1.0,
                 "score": 1.0, "decision": "selected", "reason": "fits its layer budget"},
                {"id": "msg12", "layer": "history", "tokens": 9876, "decision": "dropped", "reason": REASON},
                {"id": "msg\x1b[2K13", "layer": "history", "tokens": 3, "decision": "selected", "reason": "[bold]x"}],
}


def drawn(width: int) -> list[str]:
    console = Console(file=io.StringIO(), width=width, force_terminal=False)
    draw_report(console, REPORT, title="q")
    return [line.rstrip() for line in console.file.getvalue().split("\n")]


@pytest.mark.parametrize("width", [60, 80, 99])
def test_narrow_reports_fit_and_keep_reasons_whole(width: int) -> None:
    lines = drawn(width)
    assert all(len(line) <= width for line in lines)
    stripped = [line.strip() for line in lines]
    assert REASON in stripped or any(line.endswith(REASON) for line in stripped) or \
        " ".join(stripped).count(REASON) == 1  # wrapped at word boundaries under the row at 60
    assert "fits its layer budget" in " ".join(stripped)
    assert any(line.startswith("evidence") and "99999" in line and "46464" in line and line.endswith("│")
               for line in stripped)  # numbers whole, the bar closed
    assert "msg\\x1b[2K13" in " ".join(stripped) and "[bold]x" in stripped  # escaped, not obeyed


def test_a_cut_id_is_shown_whole_beside_its_reason() -> None:
    stripped = [line.strip() for line in drawn(60)]
    assert "note:note_20261202_095606_0251a4: fits its layer budget" in stripped


def test_wide_terminals_keep_the_table() -> None:
    lines = drawn(NARROW_COLUMNS)
    header = next(line for line in lines if line.strip().startswith("id"))
    assert "reason" in header and "decision" in header
    assert any(REASON in line for line in lines) or any("over the history budget" in line for line in lines)
    assert type(packet_table(REPORT["packets"], NARROW_COLUMNS)).__name__ == "Table"
