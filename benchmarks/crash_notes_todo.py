"""Crash benchmark for the note and todo stores (case S01): many SIGKILLed writers.

Usage (from the repository root): python benchmarks/crash_notes_todo.py [--runs 300] [--seed 0]

Each run forks `tests/storage/crash_harness.py`, kills it at random and checks the store
loads cleanly with the last saved state; exit 1 on any problem (docs/notes-todo-plan.md).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ctxagent.storage.files import read_jsonl  # noqa: E402
from tests.storage.crash_harness import check_notes, check_todo, crash_once, notes_writer, todo_writer  # noqa: E402

KINDS = {
    # name: (writer, size argument, delay range in seconds, checker, store path in the run folder)
    "notes": (notes_writer, 4000, (0.005, 0.3), check_notes, "notes"),
    "notes-2MB": (notes_writer, 2_000_000, (0.1, 0.8), check_notes, "notes"),
    "todo": (todo_writer, 300, (0.005, 0.3), check_todo, "todos.json"),
}


def run_kind(name: str, runs: int, rng: random.Random) -> tuple[int, list[str]]:
    writer, size, (low, high), check, store = KINDS[name]
    failures: list[str] = []
    ops = in_flight = leftovers = 0
    start = time.monotonic()
    for run in range(runs):
        folder = Path(tempfile.mkdtemp(prefix=f"crash_{name}_"))
        journal = folder / "journal.jsonl"
        crash_once(writer, (str(folder / store), str(journal), rng.randrange(10**9), size),
                   rng.uniform(low, high))
        problems = check(folder / store, journal)
        if problems:
            failures.append(f"{name} run {run} ({folder}): {problems}")
        lines = read_jsonl(journal) if journal.exists() else []
        ops += sum(1 for line in lines if "done" in line)
        in_flight += bool(lines and "intent" in lines[-1])
        leftovers += len(list(folder.rglob(".*.tmp")))
    took = time.monotonic() - start
    print(f"{name:10} runs={runs} failures={len(failures)} ops_completed={ops} "
          f"killed_inside_an_op={in_flight} tmp_files_left={leftovers} ({took:.1f} s)")
    return len(failures), failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300, help="runs per store (default 300)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated: " + ", ".join(KINDS))
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    total, details = 0, []
    for name in args.kinds.split(","):
        count, failures = run_kind(name, args.runs, rng)
        total += count
        details += failures
    for line in details:
        print(line)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
