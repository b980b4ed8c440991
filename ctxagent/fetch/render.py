"""Compact text of a context_fetch result for the model: grouped by source, files
grouped by path with grep-style numbered lines. No terminal colour codes.

Each item's rendering here is also what its tokens are counted on (`budget`), so what
the model reads is what the budget measured.
"""

from __future__ import annotations

from typing import Any

from ctxagent.fetch.hits import render_hit
from ctxagent.fetch.search import file_header


def note_line(row: dict[str, Any]) -> str:
    """`- [type] title (note id, score 0.91): content` on one line, newline-terminated."""
    return (f"- [{row.get('type', '?')}] {_flat(row.get('title'))} "
            f"({row.get('note_id', row.get('id', '?'))}, score {_score(row)}): {_flat(row.get('content'))}\n")


def memory_line(row: dict[str, Any]) -> str:
    """`- [episodic 0.80] (memory id, score 0.91) content`, newline-terminated."""
    return (f"- [{row.get('memory_type', '?')} {float(row.get('importance') or 0):.2f}] "
            f"({row.get('id', '?')}, score {_score(row)}) {_flat(row.get('content'))}\n")


def failed_line(row: dict[str, Any]) -> str:
    """A failed test: `- last failed: node id` or `- report: name [failure] message | detail`."""
    if row.get("report") is None:
        return f"- last failed: {row['name']}\n"
    detail = f" | {_flat(row['detail'])}" if row.get("detail") else ""
    return f"- {row['report']}: {row['name']} [{row['kind']}] {_flat(row.get('message'))}{detail}\n"


def _flat(value: Any) -> str:
    return " ".join(str(value or "").split())


def _score(row: dict[str, Any]) -> str:
    score = row.get("score")
    return f"{float(score):.2f}" if isinstance(score, (int, float)) else "-"


def render_result(data: dict[str, Any], info: dict[str, Any] | None = None) -> str:
    """The whole result as text: a section per source, then what was unavailable."""
    out = [f"context_fetch {data['query']!r}\n"]
    sources = data["sources"]
    if "files" in sources:
        out.append(_files_section(sources["files"], (info or {}).get("engine")))
    if "notes" in sources:
        out.append(_list_section("notes", [note_line(r) for r in sources["notes"]]))
    if "memory" in sources:
        out.append(_list_section("memory", [memory_line(r) for r in sources["memory"]]))
    if "tests" in sources:
        out.append(render_tests_section(sources["tests"]))
    for name, reason in data.get("unavailable", {}).items():
        out.append(f"[{name}] unavailable: {reason}\n")
    return "".join(out).rstrip("\n")


def _files_section(groups: list[dict[str, Any]], engine: str | None) -> str:
    how = f", literal search by {'ripgrep' if engine == 'rg' else 'Python scan'}" if engine else ""
    if not groups:
        return f"[files] no matching files{how}\n"
    body = [file_header(g) + "".join(render_hit(h) for h in g["hits"]) for g in groups]
    return f"[files] {len(groups)} ranked{how}\n" + "".join(body)


def _list_section(name: str, lines: list[str]) -> str:
    return f"[{name}] " + (f"{len(lines)}\n" + "".join(lines) if lines else "no matches\n")


def render_tests_section(tests: dict[str, Any]) -> str:
    last = tests.get("last_failed", {})
    out = [f"[tests] last failed: {last.get('total', len(last.get('tests', [])))}"
           + (f" ({last['error']})" if last.get("error") else "") + "\n"]
    out.extend(f"- last failed: {node}\n" for node in last.get("tests", []))
    for report in tests.get("junit", []):
        if report.get("error"):
            out.append(f"junit {report['path']}: {report['error']}\n")
            continue
        out.append(f"junit {report['path']}: {report['tests']} tests, {report['failures']} failures, "
                   f"{report['errors']} errors, {report['skipped']} skipped\n")
        out.extend(failed_line({**row, "report": report["path"]}) for row in report.get("failed", []))
    return "".join(out)
