"""Fit the notes, memory and tests sources into their token budgets.

Each row is counted on its rendering (`ctxagent.fetch.render`) and the budget is split
fairly between rows (`ctxagent.fetch.budget.fit_items`); section headers are paid first.
"""

from __future__ import annotations

from typing import Any

from ctxagent.fetch.budget import count_tokens, fit_items
from ctxagent.fetch.render import failed_line, memory_line, note_line, render_tests_section


def fit_notes(rows: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """Note rows within `budget` tokens; long contents are cut, then titles."""
    return fit_items(rows, budget, note_line, ("content", "title"))


def fit_memory(rows: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """Memory rows within `budget` tokens; long contents are cut."""
    return fit_items(rows, budget, memory_line, ("content",))


def fit_tests(tests: dict[str, Any], budget: int) -> dict[str, Any]:
    """Test artifacts within `budget` tokens: the per-report summary lines first, then
    every failed test (last failed node ids and JUnit failures) a fair share; details
    are cut before messages. `last_failed.total` keeps the count before cutting."""
    last = dict(tests.get("last_failed", {}))
    last["total"] = len(last.get("tests", []))
    reports = [dict(r) for r in tests.get("junit", [])]
    left = budget - _skeleton_tokens(last, reports)
    while reports and left < 0:  # too many reports for even their summary lines
        reports.pop()
        left = budget - _skeleton_tokens(last, reports)
    rows = [{"name": node, "report": None} for node in last.get("tests", [])]
    for index, report in enumerate(reports):
        rows.extend({**row, "report": report["path"], "_index": index} for row in report.get("failed", []))
    kept = fit_items(rows, max(0, left), failed_line, ("detail", "message", "name"))
    last["tests"] = [row["name"] for row in kept if row["report"] is None]
    for index, report in enumerate(reports):
        report["failed"] = [_public(row) for row in kept if row.get("_index") == index and row["report"] is not None]
    return {"last_failed": last, "junit": reports}


def _skeleton_tokens(last: dict[str, Any], reports: list[dict[str, Any]]) -> int:
    return count_tokens(render_tests_section({"last_failed": {**last, "tests": []},
                                       "junit": [{**r, "failed": []} for r in reports]}))


def _public(row: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in row.items() if key not in ("report", "_index")}
