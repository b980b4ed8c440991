"""Issue 15, item 11: `ctxagent context "where is the filesize formatted for progress bars?"`
on a rich-like repository shows code (context_fetch's ranked files, with numbered lines) in
[Evidence], not "(no evidence retrieved)". The real CLI in a subprocess, on a copy of
tests/fixtures/cli/rich_mini made a git repository."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import flat

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "cli" / "rich_mini"
QUESTION = "where is the filesize formatted for progress bars?"


@pytest.fixture
def rich_repo(tmp_path: Path) -> Path:
    path = tmp_path / "rich"
    shutil.copytree(FIXTURE, path)
    if shutil.which("git"):
        env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
               "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
        for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "init"]):
            subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    return path


def _evidence(context: str) -> str:
    return context.split("[Evidence]", 1)[1].split("[Context]", 1)[0]


def test_context_shows_the_code_that_formats_file_sizes(ctxagent, rich_repo: Path) -> None:
    proc = ctxagent("context", QUESTION, "--repo", str(rich_repo), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    evidence = _evidence(data["context"])
    assert "(no evidence retrieved)" not in evidence
    assert "File (rich/progress.py, score" in evidence and "File (rich/filesize.py, score" in evidence
    assert '58:     """Convert a filesize in to a string (powers of 1000, SI prefixes).' in evidence  # numbered lines
    assert data["report"]["sources"]["context_fetch_files"]["ok"] is True
    chosen = {p["id"]: p["decision"] for p in data["report"]["packets"]}
    assert chosen["rich/progress.py"] == "selected" and chosen["rich/filesize.py"] == "selected"


def test_context_on_the_terminal_lists_the_files_as_packets(ctxagent, rich_repo: Path) -> None:
    proc = ctxagent("context", QUESTION, "--repo", str(rich_repo), extra_env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    text = flat(proc.stdout)
    assert "[Evidence] File (rich/progress.py, score 1.00):" in text
    assert "rich/filesize.py evidence" in text  # its row in the packet table


def test_a_small_window_cuts_the_files_instead_of_failing(ctxagent, rich_repo: Path) -> None:
    proc = ctxagent("context", QUESTION, "--repo", str(rich_repo), "--max-tokens", "300", "--json")
    assert proc.returncode == 0, proc.stderr
    decisions = {p["decision"] for p in json.loads(proc.stdout)["report"]["packets"] if p["id"].endswith(".py")}
    assert decisions and decisions <= {"selected", "truncated", "dropped"} and "dropped" in decisions


def test_a_question_no_file_matches_still_builds(ctxagent, rich_repo: Path) -> None:
    proc = ctxagent("context", "zzqx wibble", "--repo", str(rich_repo), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["report"]["sources"]["context_fetch_files"] == {"ok": True, "items": 0}
    assert "(no evidence retrieved)" in data["context"]


def test_notes_and_files_come_together(ctxagent, rich_repo: Path) -> None:
    added = ctxagent("notes", "add", "--title", "progress bar sizes", "--content", "FileSizeColumn uses filesize.decimal",
                     "--repo", str(rich_repo))
    assert added.returncode == 0, added.stderr
    data = json.loads(ctxagent("context", QUESTION, "--repo", str(rich_repo), "--json").stdout)
    assert "Note (progress bar sizes): FileSizeColumn uses filesize.decimal" in data["context"]  # [State]
    assert "File (rich/progress.py, score" in _evidence(data["context"])
