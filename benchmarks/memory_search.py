"""Memory search latency at 100,000 memories (target: under 20 ms a query).

Usage: python benchmarks/memory_search.py [--memories 100000] [--queries 200] [--no-write]

A fresh synthetic `memory.db`, then `MemoryStore.search` timed (median and p95, wall and
CPU) for English and Chinese queries. Method and figures: docs/benchmarks.md ("Memory").
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxagent.memory import MemoryStore  # noqa: E402

DATA = ROOT / "benchmarks" / "data"
TYPES = ("working", "episodic", "semantic", "perceptual")
ZH_QUESTIONS = ("如何", "为什么", "怎样", "什么是", "哪里")


def corpus_words() -> tuple[list[str], str]:
    english = re.findall(r"[A-Za-z][A-Za-z'-]+", (DATA / "en.txt").read_text(encoding="utf-8"))
    chinese = re.sub(r"\s+", "", (DATA / "zh.txt").read_text(encoding="utf-8"))
    return english, chinese


def memory_text(rng: random.Random, english: list[str], chinese: str) -> str:
    kind = rng.random()
    ident = f"{rng.choice(['task', 'module', 'ticket', 'bug'])}_{rng.randint(1, 5000)}"
    if kind < 0.5:
        return " ".join(rng.choices(english, k=rng.randint(8, 30))) + f" ({ident})"
    start = rng.randint(0, len(chinese) - 40)
    text = chinese[start:start + rng.randint(10, 40)]
    if kind < 0.8:
        return text + f" {ident}"
    return text + " " + " ".join(rng.choices(english, k=rng.randint(3, 10)))


def queries(rng: random.Random, english: list[str], chinese: str, n: int) -> dict[str, list[str]]:
    en = [" ".join(rng.choices(english, k=rng.randint(2, 6))) for _ in range(n)]
    zh = []
    for _ in range(n):
        start = rng.randint(0, len(chinese) - 12)
        zh.append(rng.choice(ZH_QUESTIONS) + chinese[start:start + rng.randint(4, 10)] + "?")
    zh[0] = "如何优化Pandas的内存占用?"
    return {"English": en, "Chinese": zh}


def build(path: Path, count: int, rng: random.Random) -> tuple[MemoryStore, float]:
    english, chinese = corpus_words()
    now = time.time()
    entries = [{"content": memory_text(rng, english, chinese), "memory_type": rng.choice(TYPES),
                "importance": round(rng.random(), 2), "created_at": now - rng.uniform(0, 90 * 86400)}
               for _ in range(count)]
    store = MemoryStore(path)
    started = time.perf_counter()
    store.add_many(entries)
    return store, time.perf_counter() - started


def time_queries(store: MemoryStore, items: list[str]) -> dict[str, float]:
    """Median and p95 of wall and CPU milliseconds per search, and the share of queries with hits."""
    for q in items[:10]:
        store.search(q, min_importance=0.1, limit=5)
    wall, cpu, hits = [], [], 0
    for q in items:
        started, started_cpu = time.perf_counter(), time.process_time()
        hits += bool(store.search(q, min_importance=0.1, limit=5))
        cpu.append((time.process_time() - started_cpu) * 1000)
        wall.append((time.perf_counter() - started) * 1000)
    wall.sort()
    cpu.sort()
    p95 = int(0.95 * (len(items) - 1))
    return {"wall": statistics.median(wall), "wall95": wall[p95], "cpu": statistics.median(cpu), "cpu95": cpu[p95],
            "hits": hits / len(items)}


def write_section(markdown: str, heading: str = "## Memory", after: str | None = None) -> None:
    """Put `markdown` (starting with `heading`) into docs/benchmarks.md in place of the
    old block under `heading` (up to the next heading of any level), else after the
    block under `after`, else at the end. Other sections are left alone."""
    path = ROOT / "docs" / "benchmarks.md"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    found = re.search(rf"^{re.escape(heading)}\n.*?(?=^#{{2,3}} |\Z)", text, flags=re.S | re.M)
    anchor = re.search(rf"^{re.escape(after)}\n.*?(?=^## |\Z)", text, flags=re.S | re.M) if after else None
    if found:
        text = text[:found.start()] + markdown + text[found.end():]
    elif anchor:
        text = text[:anchor.end()].rstrip("\n") + "\n\n" + markdown + text[anchor.end():]
    else:
        text = text.rstrip("\n") + "\n\n" + markdown
    path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    english, chinese = corpus_words()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "memory.db"
        store, insert_s = build(db, args.memories, rng)
        size_mb = sum(f.stat().st_size for f in Path(tmp).iterdir()) / 1e6
        rows, worst_cpu95 = [], 0.0
        for name, items in queries(rng, english, chinese, args.queries).items():
            t = time_queries(store, items)
            worst_cpu95 = max(worst_cpu95, t["cpu95"])
            rows.append(f"| {name} | {len(items)} | {t['wall']:.1f} | {t['wall95']:.1f} | {t['cpu']:.1f} | "
                        f"{t['cpu95']:.1f} | {t['hits']:.0%} |")
            print(f"{name:8} wall median {t['wall']:5.1f} ms p95 {t['wall95']:5.1f} | cpu median {t['cpu']:5.1f} ms "
                  f"p95 {t['cpu95']:5.1f} | queries with hits {t['hits']:.0%}")
    load = os.getloadavg()[0]
    verdict = "met" if worst_cpu95 < 20 else "NOT met"
    print(f"insert {args.memories:,} memories in one transaction: {insert_s:.1f} s; database {size_mb:.0f} MB")
    print(f"target (CPU p95 < 20 ms): {verdict}; load average {load:.1f} on {os.cpu_count()} cores")
    section = "\n".join([
        "## Memory", "",
        f"`python benchmarks/memory_search.py --memories {args.memories} --queries {args.queries}` "
        f"(Python {platform.python_version()}, SQLite {__import__('sqlite3').sqlite_version}, the shared 2-core "
        "machine with other jobs running). A fresh `memory.db` with "
        f"{args.memories:,} synthetic memories (half English, half Chinese or mixed, random types, importances "
        "and ages up to 90 days), inserted in one transaction; then `MemoryStore.search` (FTS5 over "
        "`terms()`, bm25 x recency x importance, min_importance 0.1, limit 5), wall and CPU time of the "
        "process per query after 10 warm-up queries (wall time includes waiting for the CPU while other jobs "
        "run; CPU time is what the search itself costs).", "",
        "| queries | n | wall median ms | wall p95 ms | CPU median ms | CPU p95 ms | with hits |",
        "|---|---:|---:|---:|---:|---:|---:|", *rows, "",
        f"Insert: {insert_s:.1f} s for {args.memories:,} memories ({args.memories / insert_s:,.0f}/s); "
        f"database {size_mb:.0f} MB (file and WAL before checkpoint). Target: search under 20 ms at 100,000 "
        f"memories: {verdict} in CPU time (worst p95 {worst_cpu95:.1f} ms). Wall time depends on the other "
        f"jobs: the 1-minute load average was {load:.1f} on {os.cpu_count()} cores during this run.", "",
    ])
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
