"""Time of choosing the session state for one loop request (`stateselect.select_state`).

Usage: python benchmarks/state_selection.py [--notes 30,100,500] [--runs 5] [--window 128000]

n notes of 220 words from docs/context.md and 5 memory hits, cold and warm, CPU time.
Method and figures: docs/benchmarks.md ("Session state per loop request").
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

from ctxagent.context.packet import ContextConfig
from ctxagent.context.state.select import select_state
from ctxagent.text.tokens import TokenCounter

QUERY = "Where is parse_cfg defined, and how is the evidence budget computed?"
WORDS = (Path(__file__).resolve().parents[1] / "docs" / "context.md").read_text(encoding="utf-8").split()


def state(n: int, seed: int) -> dict:
    rnd = random.Random(seed)
    notes = [{"id": f"n{seed}_{i}", "title": f"note {i}", "type": "general", "created_at": 1.7e9 + i,
              "content": " ".join(rnd.choice(WORDS) for _ in range(220))} for i in range(n)]
    memory = [{"id": f"m{i}", "content": " ".join(rnd.choice(WORDS) for _ in range(60)), "importance": 0.5 + i / 10}
              for i in range(5)]
    return {"notes": notes, "memory": memory, "todos": [{"content": "rename parse_cfg", "status": "in_progress"}]}


def timed(st: dict, counter: TokenCounter, limit: int) -> tuple[float, dict]:
    start = time.process_time()
    chosen = select_state(st, QUERY, limit=limit, counter=counter, config=ContextConfig(), now=time.time())
    return (time.process_time() - start) * 1000, chosen.used | {"budget": chosen.budgets["evidence"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", default="30,100,500")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--window", type=int, default=128_000)
    args = parser.parse_args()
    counter, limit = TokenCounter("gpt-4o"), args.window - 1000
    print(f"{'notes':>6} {'cold ms':>8} {'warm ms':>8} {'evidence tokens':>16} {'budget':>7}")
    for n in (int(x) for x in args.notes.split(",")):
        cold, warm = [], []
        for run in range(args.runs):
            st = state(n, seed=n * 1000 + run)
            cold.append(timed(st, counter, limit)[0])
            ms, used = timed(st, counter, limit)
            warm.append(ms)
        print(f"{n:>6} {statistics.median(cold):>8.1f} {statistics.median(warm):>8.1f} "
              f"{used['evidence']:>16,} {used['budget']:>7,}")


if __name__ == "__main__":
    main()
