"""Test artifacts: pytest's lastfailed cache (made by a real pytest run) and JUnit XML."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxagent.fetch.budget import count_tokens
from ctxagent.fetch.fit import fit_tests
from ctxagent.fetch.render import render_tests_section
from ctxagent.fetch.tests_artifacts import collect, find_reports, last_failed, parse_junit

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4" failures="1" errors="1" skipped="1">
  <testcase classname="tests.test_io" name="test_read" time="0.01"/>
  <testcase classname="tests.test_io" name="test_write"><failure message="assert 1 == 2">E   assert 1 == 2
tests/test_io.py:9: AssertionError</failure></testcase>
  <testcase classname="tests.test_net" name="test_fetch"><error message="fixture 'server' not found"/></testcase>
  <testcase classname="tests.test_net" name="test_slow"><skipped message="slow"/></testcase>
</testsuite></testsuites>
"""


@pytest.fixture(scope="module")
def pytest_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny project on which real pytest ran once: one pass, two failures."""
    root = tmp_path_factory.mktemp("proj")
    (root / "test_sample.py").write_text(
        "def test_ok():\n    assert True\n\n"
        "def test_bad_sum():\n    assert 1 + 1 == 3\n\n"
        "def test_bad_name():\n    assert 'a' == 'b'\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:randomly",
                    "--junitxml=reports/junit.xml", "test_sample.py"],
                   cwd=root, env=env, capture_output=True, timeout=120, check=False)
    return root


def test_last_failed_from_a_real_pytest_run(pytest_project: Path) -> None:
    found = last_failed(pytest_project)
    assert found["tests"] == ["test_sample.py::test_bad_name", "test_sample.py::test_bad_sum"]
    assert "error" not in found


def test_junit_from_a_real_pytest_run(pytest_project: Path) -> None:
    reports = collect(pytest_project)["junit"]
    assert [r["path"] for r in reports] == ["reports/junit.xml"]
    report = reports[0]
    assert (report["tests"], report["failures"], report["errors"]) == (3, 2, 0)
    names = sorted(f["name"] for f in report["failed"])
    assert names == ["test_sample::test_bad_name", "test_sample::test_bad_sum"]
    assert any("assert" in f["message"] for f in report["failed"])


def test_junit_counts_failures_errors_and_skips(tmp_path: Path) -> None:
    (tmp_path / "test-results").mkdir()
    (tmp_path / "test-results" / "TEST-io.xml").write_text(JUNIT, encoding="utf-8")
    report = parse_junit(tmp_path / "test-results" / "TEST-io.xml", tmp_path)
    assert (report["tests"], report["failures"], report["errors"], report["skipped"]) == (4, 1, 1, 1)
    assert report["failed"][0] == {"name": "tests.test_io::test_write", "kind": "failure",
                                   "message": "assert 1 == 2",
                                   "detail": "E   assert 1 == 2\ntests/test_io.py:9: AssertionError"}
    assert report["failed"][1]["kind"] == "error"


@pytest.mark.parametrize("text,error", [
    ("<testsuites><testcase", "unreadable"),
    ("<html><body/></html>", "not a JUnit report"),
    ("", "unreadable"),
])
def test_bad_reports_are_reported_not_raised(tmp_path: Path, text: str, error: str) -> None:
    (tmp_path / "junit.xml").write_text(text, encoding="utf-8")
    assert [p.name for p in find_reports(tmp_path)] == ["junit.xml"]
    assert error in parse_junit(tmp_path / "junit.xml", tmp_path)["error"]


def test_entity_expansion_bomb_is_refused(tmp_path: Path) -> None:
    bomb = ('<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
            + "".join(f'<!ENTITY {c} "{("&" + p + ";") * 10}">' for p, c in zip("abcdefgh", "bcdefghi"))
            + ']><testsuite><testcase name="x"><failure message="&i;"/></testcase></testsuite>')
    (tmp_path / "junit.xml").write_text(bomb, encoding="utf-8")
    assert "error" in parse_junit(tmp_path / "junit.xml", tmp_path)


@pytest.mark.parametrize("content,error", [("{not json", True), ("[1, 2]", True), ('{"t.py::a": true, "t.py::b": false}', False)])
def test_lastfailed_variants(tmp_path: Path, content: str, error: bool) -> None:
    path = tmp_path / ".pytest_cache" / "v" / "cache" / "lastfailed"
    path.parent.mkdir(parents=True)
    path.write_text(content, encoding="utf-8")
    found = last_failed(tmp_path)
    assert ("error" in found) is error
    assert found["tests"] == ([] if error else ["t.py::a"])


def test_no_artifacts_is_empty_not_an_error(tmp_path: Path) -> None:
    assert collect(tmp_path) == {"last_failed": {"path": ".pytest_cache/v/cache/lastfailed", "tests": []},
                                 "junit": []}


def test_tests_source_fits_its_budget(tmp_path: Path) -> None:
    path = tmp_path / ".pytest_cache" / "v" / "cache" / "lastfailed"
    path.parent.mkdir(parents=True)
    path.write_text("{" + ", ".join(f'"tests/test_m.py::test_case_number_{i}": true' for i in range(60)) + "}")
    (tmp_path / "junit.xml").write_text(JUNIT.replace("assert 1 == 2", "assert 1 == 2 " + "x" * 900))
    for budget in (60, 150, 400):
        fitted = fit_tests(collect(tmp_path), budget)
        assert count_tokens(render_tests_section(fitted)) <= budget
        assert fitted["last_failed"]["total"] == 60


# issue 17 S11: artifacts are read only as regular files inside the workspace, capped

def _outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    (out / "v" / "cache").mkdir(parents=True)
    (out / "v" / "cache" / "lastfailed").write_text('{"SECRET_OUTSIDE::t": true}')
    (out / "reports").mkdir()
    (out / "reports" / "TEST-x.xml").write_text(JUNIT.replace("test_read", "SECRET_OUTSIDE"))
    return out


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom", "fifo", "outside_file", "dir"])
def test_s11_lastfailed_that_is_not_a_regular_inside_file_is_an_error(tmp_path, target):
    ws = tmp_path / "ws"
    cache = ws / ".pytest_cache" / "v" / "cache"
    cache.mkdir(parents=True)
    out = _outside(tmp_path)
    if target == "fifo":
        os.mkfifo(cache / "lastfailed")
    elif target == "dir":
        (cache / "lastfailed").mkdir()
    else:
        src = out / "v" / "cache" / "lastfailed" if target == "outside_file" else Path(target)
        (cache / "lastfailed").symlink_to(src)
    result = last_failed(ws)
    assert result["tests"] == [] and "error" in result
    assert "SECRET_OUTSIDE" not in str(result)


@pytest.mark.parametrize("link", [".pytest_cache", ".pytest_cache/v", ".pytest_cache/v/cache"])
def test_s11_symlinked_cache_folders_are_not_followed(tmp_path, link):
    ws = tmp_path / "ws"
    ws.mkdir()
    out = _outside(tmp_path)
    target = {".pytest_cache": out, ".pytest_cache/v": out / "v", ".pytest_cache/v/cache": out / "v" / "cache"}[link]
    (ws / link).parent.mkdir(parents=True, exist_ok=True)
    (ws / link).symlink_to(target)
    result = last_failed(ws)
    assert "SECRET_OUTSIDE" not in str(result) and result["tests"] == []


@pytest.mark.parametrize("folder", ["reports", "build/test-results", "build"])
def test_s11_symlinked_report_folders_are_not_read(tmp_path, folder):
    ws = tmp_path / "ws"
    ws.mkdir()
    out = _outside(tmp_path)
    if folder == "build":
        (ws / "build").symlink_to(out)
        (out / "test-results").mkdir()
        (out / "test-results" / "TEST-y.xml").write_text(JUNIT.replace("test_read", "SECRET_OUTSIDE"))
    else:
        (ws / folder).parent.mkdir(parents=True, exist_ok=True)
        (ws / folder).symlink_to(out / "reports")
    assert find_reports(ws) == []
    assert "SECRET_OUTSIDE" not in str(collect(ws))


def test_s11_oversized_lastfailed_is_skipped_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr("ctxagent.fetch.tests_artifacts.MAX_LASTFAILED_BYTES", 100)
    cache = tmp_path / ".pytest_cache" / "v" / "cache"
    cache.mkdir(parents=True)
    (cache / "lastfailed").write_text(json.dumps({f"t::{i}": True for i in range(50)}))
    result = last_failed(tmp_path)
    assert "larger than 100 bytes" in result["error"] and result["tests"] == []


def test_s11_regular_inside_artifacts_still_read(tmp_path):
    cache = tmp_path / ".pytest_cache" / "v" / "cache"
    cache.mkdir(parents=True)
    (cache / "lastfailed").write_text('{"tests/a.py::t": true}')
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "TEST-a.xml").write_text(JUNIT)
    result = collect(tmp_path)
    assert result["last_failed"]["tests"] == ["tests/a.py::t"]
    assert result["junit"][0]["failures"] == 1 and result["junit"][0]["path"] == "reports/TEST-a.xml"
