"""Task lines: our fields, SWE-bench's, and the errors that name the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxagent.batch.tasks import load_tasks
from ctxagent.errors import BatchError


def write(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def test_our_fields_and_relative_paths(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    path = write(tmp_path, {"id": "a", "repo": "repo", "task": "fix it", "test": "pytest -q", "max_steps": 5,
                            "timeout_s": 60, "mode": "workspace-write"}, "", {"id": "b", "repo": "git@host:x/y.git",
                                                                              "task": "t"})
    first, second = load_tasks(path)
    assert first.repo == str((tmp_path / "repo").resolve()) and first.max_steps == 5 and first.test == "pytest -q"
    assert second.repo == "git@host:x/y.git"


def test_swe_bench_lines_as_they_are(tmp_path: Path) -> None:
    line = {"instance_id": "astropy__astropy-12907", "repo": "astropy/astropy", "base_commit": "d16bfe05",
            "problem_statement": "Modeling's separability_matrix ...", "patch": "diff ...", "FAIL_TO_PASS": "[]",
            "version": "4.3", "created_at": "2022-03-03"}
    [task] = load_tasks(write(tmp_path, line))
    assert (task.id, task.repo, task.base_commit) == ("astropy__astropy-12907",
                                                      "https://github.com/astropy/astropy.git", "d16bfe05")
    assert task.task.startswith("Modeling's")


@pytest.mark.parametrize("line, message", [
    ("{not json", "line 2: not JSON"),
    ("[1, 2]", "line 2: a task is a JSON object"),
    ({"id": "x", "repo": "r"}, "line 2: field 'task' is missing"),
    ({"id": "x", "repo": "r", "task": "t", "tset": "pytest"}, "line 2: unknown field 'tset'"),
    ({"id": "../x", "repo": "r", "task": "t"}, "line 2: id must be"),
    ({"id": "x", "repo": "r", "task": "t", "max_steps": 0}, "line 2: field 'max_steps'"),
    ({"id": "x", "repo": "r", "task": "t", "mode": "yolo"}, "line 2: field 'mode'"),
    ({"id": "ok", "repo": "r", "task": "t"}, "line 2: id 'ok' is already used on line 1"),
])
def test_bad_lines_name_the_line(tmp_path: Path, line: object, message: str) -> None:
    with pytest.raises(BatchError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_tasks(write(tmp_path, {"id": "ok", "repo": "r", "task": "t"}, line))


def test_empty_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(BatchError, match="holds no task"):
        load_tasks(write(tmp_path, ""))
    with pytest.raises(BatchError, match="cannot read the tasks file"):
        load_tasks(tmp_path / "missing.jsonl")
