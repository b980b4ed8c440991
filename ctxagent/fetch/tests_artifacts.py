"""Test artifacts a workspace already holds: pytest's last failures and JUnit XML reports.

- `.pytest_cache/v/cache/lastfailed`: pytest's cache plugin writes a JSON object
  {node id: true} of the tests that failed in the last run (and deletes the file when
  none did), at the pytest root directory (the workspace root here).
- JUnit XML (`<testsuites>`/`<testsuite>` with `<testcase>` children holding
  `<failure>`/`<error>`/`<skipped>`), as written by `pytest --junitxml`, Maven
  Surefire, Gradle, Jest-junit and most CI tools. Looked for in REPORT_DIRS and as
  `*junit*.xml` / `TEST-*.xml` files, at most MAX_REPORTS files of MAX_XML_BYTES each
  (Python's expat refuses entity-expansion bombs).
Reading never raises: an unreadable file is reported with an `error` field.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

LASTFAILED = Path(".pytest_cache") / "v" / "cache" / "lastfailed"
REPORT_DIRS = (".", "reports", "test-results", "test-reports", "junit", "build/test-results",
               "build/test-reports", "target/surefire-reports", "target/test-reports")
MAX_REPORTS = 10
MAX_XML_BYTES = 5_000_000
MAX_DETAIL_CHARS = 400


def last_failed(root: Path) -> dict[str, Any]:
    """{"path": str, "tests": [node id, sorted]} from pytest's cache; tests [] when the
    file is absent (no failures last run); with "error" when it is unreadable."""
    path = root / LASTFAILED
    out: dict[str, Any] = {"path": LASTFAILED.as_posix(), "tests": []}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return out
    except (OSError, ValueError) as exc:
        return {**out, "error": f"unreadable: {exc}"}
    if not isinstance(data, dict):
        return {**out, "error": "not a JSON object"}
    out["tests"] = sorted(str(node) for node, failed in data.items() if failed)
    return out


def find_reports(root: Path) -> list[Path]:
    """JUnit-looking XML files under `root`'s report folders, newest first."""
    found: set[Path] = set()
    for folder in REPORT_DIRS:
        base = root / folder
        pattern = "*.xml" if folder != "." else "*junit*.xml"
        if base.is_dir():
            found.update(p for p in base.glob(pattern) if p.is_file() and not p.is_symlink())
            found.update(p for p in base.glob("TEST-*.xml") if p.is_file() and not p.is_symlink())
    return sorted(found, key=lambda p: (-_mtime(p), str(p)))[:MAX_REPORTS]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def parse_junit(path: Path, root: Path) -> dict[str, Any]:
    """Summary of one JUnit XML report: {"path", "tests", "failures", "errors",
    "skipped", "failed": [{"name", "kind": "failure"|"error", "message", "detail"}]},
    or {"path", "error"} when it is not a readable JUnit report."""
    rel = path.relative_to(root).as_posix()
    try:
        if path.stat().st_size > MAX_XML_BYTES:
            return {"path": rel, "error": f"larger than {MAX_XML_BYTES} bytes, skipped"}
        tree = ET.parse(path)
    except (OSError, ET.ParseError) as exc:
        return {"path": rel, "error": f"unreadable: {exc}"}
    top = tree.getroot()
    if top.tag not in ("testsuites", "testsuite"):
        return {"path": rel, "error": f"not a JUnit report (root element <{top.tag}>)"}
    cases = top.iter("testcase")
    summary = {"path": rel, "tests": 0, "failures": 0, "errors": 0, "skipped": 0, "failed": []}
    for case in cases:
        summary["tests"] += 1
        _count_case(case, summary)
    return summary


def _count_case(case: ET.Element, summary: dict[str, Any]) -> None:
    if case.find("skipped") is not None:
        summary["skipped"] += 1
    for kind, key in (("failure", "failures"), ("error", "errors")):
        problem = case.find(kind)
        if problem is None:
            continue
        summary[key] += 1
        summary["failed"].append({
            "name": _case_name(case),
            "kind": kind,
            "message": (problem.get("message") or "").strip()[:MAX_DETAIL_CHARS],
            "detail": (problem.text or "").strip()[:MAX_DETAIL_CHARS],
        })


def _case_name(case: ET.Element) -> str:
    classname, name = case.get("classname") or "", case.get("name") or "?"
    return f"{classname}::{name}" if classname else name


def collect(root: Path) -> dict[str, Any]:
    """{"last_failed": last_failed(root), "junit": [parse_junit(...) per report]}."""
    return {"last_failed": last_failed(root), "junit": [parse_junit(p, root) for p in find_reports(root)]}
