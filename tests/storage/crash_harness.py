"""Crash harness for the note and todo stores (case S01): a writer process is killed with
SIGKILL at a random moment, then the store is checked.

The writer logs each operation twice in a JSONL journal (fsynced): an `intent` line
before it starts and a `done` line after the store returned. Replaying the `done` lines
gives the state the store must hold; only the one operation whose intent has no `done`
(the one in flight when the process died) may have happened or not. Note bodies carry
their own SHA-256, so a torn file is caught too.

Used by `tests/storage/test_crash_notes_todo.py` (a few dozen runs) and
`benchmarks/crash_notes_todo.py` (as many as you like).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import random
import signal
import time
import warnings
from pathlib import Path
from typing import Any, Callable

from ctxagent.storage.files import append_jsonl, read_jsonl
from ctxagent.tools import NoteTool, TodoTool

STATUSES = ("pending", "in_progress", "completed")


def body(seq: int, rng: random.Random, max_bytes: int) -> str:
    """A note body that proves its own integrity: text plus its SHA-256 on the last line."""
    chunk = "".join(rng.choice("abcdefgh ijk\n中文") for _ in range(64))
    size = rng.randint(0, max_bytes)
    filler = (chunk * (size // 64 + 1))[:size]
    text = f"seq={seq}\n{filler}"
    return f"{text}\nsha={hashlib.sha256(text.encode()).hexdigest()}"


def body_ok(content: str) -> bool:
    """True if `content` ends with the SHA-256 of what precedes it."""
    text, _, digest = content.rpartition("\nsha=")
    return hashlib.sha256(text.encode()).hexdigest() == digest


def digest(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()[:16]


# ---------------------------------------------------------------- writers (child process)

def notes_writer(folder: str, journal: str, seed: int, max_bytes: int) -> None:
    """Create, update and delete notes forever, journaling each operation."""
    rng, tool, live, seq = random.Random(seed), NoteTool(workspace=folder), [], 0
    while True:
        seq += 1
        op = rng.choice(["create"] * 3 + ["update"] * 3 + ["delete"]) if live else "create"
        target = rng.choice(live) if op != "create" else None
        content = body(seq, rng, max_bytes)
        append_jsonl(Path(journal), {"intent": op, "id": target})
        if op == "create":
            target = tool.run({"action": "create", "title": f"note {seq}", "content": content,
                               "note_type": rng.choice(["action", "blocker"]), "tags": [f"s{seed}"]})
            live.append(target)
        elif op == "update":
            tool.run({"action": "update", "note_id": target, "content": content})
        else:
            tool.run({"action": "delete", "note_id": target})
            live.remove(target)
        append_jsonl(Path(journal), {"done": op, "id": target, "digest": digest(content)})


def todo_writer(path: str, journal: str, seed: int, max_items: int) -> None:
    """Add, update, remove, clear and replace todo items forever, journaling each operation."""
    rng, tool, seq = random.Random(seed), TodoTool(path), 0
    while True:
        seq += 1
        items = tool.run({"action": "list"})
        op = rng.choice(["add"] * 3 + ["update"] * 3 + ["remove", "clear", "set"]) if items else "add"
        append_jsonl(Path(journal), {"intent": op})
        if op == "add":
            tool.run({"action": "add", "content": f"item {seq} " + "x" * rng.randint(0, 400)})
        elif op == "update":
            _move(tool, rng, items)
        elif op == "remove":
            tool.run({"action": "remove", "id": rng.choice(items)["id"]})
        elif op == "clear":
            tool.run({"action": "clear_completed"})
        else:
            specs = [{"content": f"bulk {seq}-{i} " + "y" * 200} for i in range(rng.randint(1, max_items))]
            tool.run({"action": "set", "items": specs})
        state = tool.run({"action": "list"})
        append_jsonl(Path(journal), {"done": op, "board": [[i["id"], i["status"], i["content"]] for i in state]})


def _move(tool: TodoTool, rng: random.Random, items: list[dict[str, Any]]) -> None:
    item = rng.choice(items)
    status = rng.choice(STATUSES)
    if status == "in_progress" and any(i["status"] == "in_progress" for i in items):
        status = "completed"
    tool.run({"action": "update", "id": item["id"], "status": status})


# ---------------------------------------------------------------- one crash run (parent)

def crash_once(target: Any, args: tuple, delay_s: float, timeout_s: float = 30.0,
               until: Callable[[], bool] | None = None) -> None:
    """Fork `target(*args)`, SIGKILL it after `delay_s` seconds, and reap it.

    With `until`, the delay starts once `until()` is true (polled, at most `timeout_s`).
    """
    proc = multiprocessing.get_context("fork").Process(target=target, args=args, daemon=True)
    proc.start()
    deadline = time.monotonic() + timeout_s
    while until is not None and not until() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(delay_s)
    if proc.pid is not None:
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.join(timeout_s)


def check_notes(folder: Path, journal: Path) -> list[str]:
    """Problems found in the notes store after a crash ([] = intact). Also fails on warnings."""
    expected, in_flight = _replay_notes(read_jsonl(journal) if journal.exists() else [])
    problems: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tool = NoteTool(workspace=folder)
        rows = {n.id: n.as_item() for n in tool.store.all()}
        for note_id in rows:
            content = tool.run({"action": "read", "note_id": note_id})["content"]
            if not body_ok(content):
                problems.append(f"note {note_id}: torn body")
        tool.run({"action": "summary"})
    problems += [f"warning: {w.message}" for w in caught]
    for note_id, want in expected.items():
        got = rows.get(note_id)
        if note_id == in_flight:
            continue
        if got is None:
            problems.append(f"note {note_id}: lost")
        elif digest(got["content"]) != want:
            problems.append(f"note {note_id}: content is not the last saved version")
    extra = set(rows) - set(expected) - {in_flight}
    if len(extra) > (1 if in_flight == "create" else 0):
        problems.append(f"unexpected notes: {sorted(extra)}")
    return problems


def _replay_notes(journal: list[dict[str, Any]]) -> tuple[dict[str, str], str | None]:
    state: dict[str, str] = {}
    in_flight: str | None = None
    for line in journal:
        if "intent" in line:
            in_flight = line["id"] if line["intent"] != "create" else "create"
            continue
        in_flight = None
        if line["done"] == "delete":
            state.pop(line["id"], None)
        else:
            state[line["id"]] = line["digest"]
    return state, in_flight


def check_todo(path: Path, journal: Path) -> list[str]:
    """Problems found in the todo board after a crash ([] = intact). Also fails on warnings."""
    lines = read_jsonl(journal) if journal.exists() else []
    done = [line["board"] for line in lines if "done" in line]
    allowed = [done[-1] if done else []]
    if lines and "intent" in lines[-1]:
        allowed.append(None)  # the in-flight operation may have been saved: any valid board
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        items = TodoTool(path).run({"action": "list"})
    problems = [f"warning: {w.message}" for w in caught]
    board = [[i["id"], i["status"], i["content"]] for i in items]
    if sum(1 for i in items if i["status"] == "in_progress") > 1:
        problems.append("more than one item in progress")
    if len({i["id"] for i in items}) != len(items):
        problems.append("duplicate ids")
    if board not in allowed and None not in allowed:
        problems.append(f"board is not the last saved one ({len(board)} items)")
    if None in allowed and done and board != done[-1] and not _one_step_from(done[-1], board):
        problems.append("board is neither the last saved one nor one operation later")
    return problems


def _one_step_from(before: list[list[Any]], after: list[list[Any]]) -> bool:
    """A loose check that `after` can follow `before` by one operation: the items kept by
    every single-step change (add/update/remove/clear) or a bulk replacement."""
    old, new = {i[0]: i for i in before}, {i[0]: i for i in after}
    changed = [k for k in old.keys() & new.keys() if old[k] != new[k]]
    added, removed = new.keys() - old.keys(), old.keys() - new.keys()
    single = len(changed) + len(added) + len(removed) <= 1
    cleared = not changed and not added and all(old[k][1] == "completed" for k in removed)
    replaced = bool(after) and all(i[2].startswith("bulk ") for i in after)
    return single or cleared or replaced
