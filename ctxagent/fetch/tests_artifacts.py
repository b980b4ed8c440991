"""Test artifacts a workspace already holds: pytest's last failures and JUnit XML reports.

`.pytest_cache/v/cache/lastfailed` ({node id: true}) and JUnit XML from REPORT_DIRS,
bounded by MAX_REPORTS / MAX_XML_BYTES; read as regular files inside the workspace only
(O_NOFOLLOW per component, issue 17 S11); never raises (docs/context-fetch.md).
"""

from __future__ import annotations

import errno
import json
import os
import stat
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

LASTFAILED = Path(".pytest_cache") / "v" / "cache" / "lastfailed"
REPORT_DIRS = (".", "reports", "test-results", "test-reports", "junit", "build/test-results",
               "build/test-reports", "target/surefire-reports", "target/test-reports")
MAX_REPORTS = 10
MAX_XML_BYTES = 5_000_000
MAX_LASTFAILED_BYTES = 5_000_000
MAX_DETAIL_CHARS = 400


def last_failed(root: Path) -> dict[str, Any]:
    """{"path": str, "tests": [node id, sorted]} from pytest's cache; tests [] when the
    file is absent (no failures last run); with "error" when it is unreadable."""
    out: dict[str, Any] = {"path": LASTFAILED.as_posix(), "tests": []}
    try:
        data = json.loads(read_inside(root, LASTFAILED, MAX_LASTFAILED_BYTES).decode("utf-8"))
    except FileNotFoundError:
        return out
    except (OSError, ValueError) as exc:
        return {**out, "error": f"unreadable: {exc}"}
    if not isinstance(data, dict):
        return {**out, "error": "not a JSON object"}
    out["tests"] = sorted(str(node) for node, failed in data.items() if failed)
    return out


def read_inside(root: Path, rel: Path, cap: int) -> bytes:
    """Bytes of the regular file `root/rel`, opened component by component without
    following a symlink. Raises FileNotFoundError when absent, OSError when a component
    is a link, not a directory, or the file is not regular or larger than `cap` bytes."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in rel.parts[:-1]:
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
        nxt = os.open(rel.parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
        os.close(fd)
        fd = nxt
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if st.st_size > cap:
            raise OSError(errno.EFBIG, f"larger than {cap} bytes, skipped")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read(cap + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > cap:
        raise OSError(errno.EFBIG, f"larger than {cap} bytes, skipped")
    return data


def _real_dir(root: Path, folder: str) -> bool:
    """True when `root/folder` is a directory reached through no symlink."""
    path = root
    for part in Path(folder).parts:
        path = path / part
        try:
            if not stat.S_ISDIR(path.lstat().st_mode):
                return False
        except OSError:
            return False
    return True


def find_reports(root: Path) -> list[Path]:
    """JUnit-looking XML files under `root`'s report folders, newest first."""
    found: set[Path] = set()
    for folder in REPORT_DIRS:
        base = root / folder
        pattern = "*.xml" if folder != "." else "*junit*.xml"
        if _real_dir(root, folder) and base.is_dir():
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
        data = read_inside(root, Path(rel), MAX_XML_BYTES)
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            return {"path": rel, "error": f"larger than {MAX_XML_BYTES} bytes, skipped"}
        return {"path": rel, "error": f"unreadable: {exc}"}
    try:
        top = ET.fromstring(data)
    except ET.ParseError as exc:
        return {"path": rel, "error": f"unreadable: {exc}"}
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
