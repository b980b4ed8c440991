"""S01 (c): a writer killed with SIGKILL at a random point never leaves a corrupt store.

Each run forks a writer (tests/storage/crash_harness.py), kills it after a random delay,
and checks that the store loads without a warning, that every saved note and the todo
board are exactly the last saved versions (the one operation in flight may or may not
have happened), and that no note body is torn. More runs: benchmarks/crash_notes_todo.py.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.storage.crash_harness import (
    check_notes,
    check_todo,
    crash_once,
    notes_writer,
    todo_writer,
)

RUNS = 40


@pytest.mark.parametrize("run", range(RUNS))
def test_S01c_notes_survive_sigkill_at_random_points(tmp_path: Path, run: int) -> None:
    rng = random.Random(run)
    folder, journal = tmp_path / "notes", tmp_path / "journal.jsonl"
    crash_once(notes_writer, (str(folder), str(journal), run, 4000), rng.uniform(0.005, 0.25))
    assert check_notes(folder, journal) == []


@pytest.mark.parametrize("run", range(RUNS))
def test_S01c_todo_board_survives_sigkill_at_random_points(tmp_path: Path, run: int) -> None:
    rng = random.Random(1000 + run)
    path, journal = tmp_path / "todos.json", tmp_path / "journal.jsonl"
    crash_once(todo_writer, (str(path), str(journal), run, 300), rng.uniform(0.005, 0.25))
    assert check_todo(path, journal) == []


@pytest.mark.parametrize("run", range(8))
def test_S01c_large_note_interrupted_mid_write_keeps_previous_version(tmp_path: Path, run: int) -> None:
    """Bodies of up to 2 MB make the kill land inside a write most of the time."""
    rng = random.Random(2000 + run)
    folder, journal = tmp_path / "notes", tmp_path / "journal.jsonl"
    crash_once(notes_writer, (str(folder), str(journal), run, 2_000_000), rng.uniform(0.2, 0.6))
    assert check_notes(folder, journal) == []


def test_harness_catches_a_torn_or_lost_note(tmp_path: Path) -> None:
    """The checker is not vacuous: a truncated body and a vanished note are reported."""
    folder, journal = tmp_path / "notes", tmp_path / "journal.jsonl"
    crash_once(notes_writer, (str(folder), str(journal), 7, 4000), 0.05,
               until=lambda: len(list(folder.glob("note_*.md"))) >= 3)
    files = sorted(folder.glob("note_*.md"))
    assert len(files) >= 2 and check_notes(folder, journal) == []
    files[0].write_bytes(files[0].read_bytes()[:-40])
    files[1].unlink()
    problems = check_notes(folder, journal)
    assert any("torn body" in p for p in problems)
    assert any("lost" in p for p in problems) or len(problems) >= 2


def test_harness_catches_a_stale_todo_board(tmp_path: Path) -> None:
    from ctxagent.storage.files import append_jsonl
    from ctxagent.tools import TodoTool

    path, journal = tmp_path / "todos.json", tmp_path / "journal.jsonl"
    tool = TodoTool(path)
    for text in ("a", "b", "c"):
        tool.run({"action": "add", "content": text})
    board = [[i["id"], i["status"], i["content"]] for i in tool.run({"action": "list"})]
    append_jsonl(journal, {"done": "add", "board": board})
    assert check_todo(path, journal) == []
    tool.run({"action": "remove", "id": 1})
    assert any("last saved" in p for p in check_todo(path, journal))
    append_jsonl(journal, {"intent": "remove"})
    assert check_todo(path, journal) == []  # one operation in flight may have landed
    tool.run({"action": "remove", "id": 2})
    assert any("one operation later" in p for p in check_todo(path, journal))
