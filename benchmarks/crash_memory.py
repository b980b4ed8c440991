"""SIGKILL a memory writer at random points, many times, and check the store each time.

Usage: python benchmarks/crash_memory.py [--runs 1000] [--max-delay-ms 200] [--seed 0] [--no-write]

Checks integrity, FTS5, no torn memory and every finished save; exits 1 on any problem.
Method and figures: docs/benchmarks.md ("Memory: SIGKILL crash runs").
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.memory_search import write_section  # noqa: E402
from ctxagent.storage.files import read_jsonl  # noqa: E402
from tests.memory.crash_harness import check, crash_once  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--max-delay-ms", type=float, default=200.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    args = parser.parse_args()
    started, operations, failures = time.perf_counter(), 0, 0
    for run in range(args.runs):
        seed = args.seed + run
        rng = random.Random(seed)
        with tempfile.TemporaryDirectory() as tmp:
            db, journal = Path(tmp) / "memory.db", Path(tmp) / "journal.jsonl"
            crash_once(db, journal, seed, rng.uniform(0, args.max_delay_ms / 1000), after_open=run % 5 != 0)
            problems = check(db, journal)
            operations += sum(1 for line in read_jsonl(journal) if "done" in line) if journal.exists() else 0
        if problems:
            failures += 1
            print(f"run {seed}: {problems}")
    elapsed = time.perf_counter() - started
    summary = (f"{args.runs} runs, {operations:,} completed operations before the kills, {failures} runs with "
               f"problems ({elapsed:.0f} s)")
    print(summary)
    if not args.no_write:
        write_section("\n".join([
            "### Memory: SIGKILL crash runs", "",
            f"`python benchmarks/crash_memory.py --runs {args.runs} --max-delay-ms {args.max_delay_ms:g}`: a writer "
            "(add, update, remove, consolidate, forget) killed with SIGKILL at a random point, then the store is "
            "opened and checked (PRAGMA integrity_check, FTS5 integrity-check, no partial or torn memory, every "
            f"finished operation kept). {summary}.", ""]), heading="### Memory: SIGKILL crash runs", after="## Memory")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
