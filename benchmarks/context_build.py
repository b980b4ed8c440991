"""Build time of ContextBuilder against the number of candidate packets.

Usage: python benchmarks/context_build.py [--sizes 100,500,...,20000] [--runs 5] [--model gpt-4o]
       [--max-tokens 16000] [--text synthetic|repo] [--no-first]

Figures per n (first, new query, cold, warm; CPU time) and the growth exponent of the cold
time. Method and figures: docs/benchmarks.md ("Build time against candidate packets").
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import subprocess
import sys
import time
from functools import lru_cache
from pathlib import Path

from ctxagent.context import ContextBuilder, ContextConfig, ContextPacket

WORDS = ("the parser reads config files and builds a context with budget tokens layer evidence history tool result "
         "git commit note state memory window model query select score relevance recency").split()
CODE = ("parse_cfg ContextBuilder load_settings TokenCounter repair_pairing history_units apply_patch "
        "src/app.py tests/test_app.py __init__ self.config return None").split()
CJK = ("内存", "优化", "上下文", "预算", "检索", "笔记", "历史", "工具", "结果", "配置", "数据", "模型")
TYPES = ("memory", "rag", "note", "custom")
NOW = 1_700_000_000.0
QUERY = "How does parse_cfg load the config budget? 内存优化"
REPO = Path(__file__).resolve().parent.parent


def packet_text(rng: random.Random) -> str:
    target = rng.randint(80, 600)
    parts: list[str] = []
    size = 0
    while size < target:
        pool = rng.choices((WORDS, CODE, CJK), weights=(6, 2, 1))[0]
        word = rng.choice(pool) + (str(rng.randint(0, 999)) if rng.random() < 0.15 else "")
        parts.append(word)
        size += len(word) + 1
    return " ".join(parts)


@lru_cache(maxsize=1)
def _repo_pieces() -> list[str]:
    """This repository's Markdown and Python files cut into 80-600 character pieces."""
    files = sorted(REPO.glob("docs/*.md")) + sorted(REPO.glob("ctxagent/**/*.py"))
    rng, pieces = random.Random(0), []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        start = 0
        while start < len(text) - 80:
            size = rng.randint(80, 600)
            pieces.append(text[start:start + size])
            start += size
    return pieces


def make_packets(n: int, seed: int, kind: str = "synthetic") -> list[ContextPacket]:
    rng = random.Random(seed)
    if kind == "synthetic":
        return [ContextPacket(packet_text(rng), timestamp=NOW - rng.uniform(0, 86_400), metadata={"type": rng.choice(TYPES)})
                for _ in range(n)]
    pieces = _repo_pieces()
    return [ContextPacket(f"{rng.choice(pieces)} #{seed}-{i}",  # the suffix makes every text new
                          timestamp=NOW - rng.uniform(0, 86_400), metadata={"type": rng.choice(TYPES)}) for i in range(n)]


def make_history(seed: int) -> list[dict]:
    rng = random.Random(seed)
    return [{"role": ("user", "assistant")[i % 2], "content": packet_text(rng)} for i in range(20)]


def new_builder(model: str, max_tokens: int) -> ContextBuilder:
    builder = ContextBuilder(config=ContextConfig(max_tokens=max_tokens), model=model, clock=lambda: NOW)
    builder.build_messages("warm up the tokenizer")  # loads the tokenizer tables and the templates
    return builder


def timed_build(builder: ContextBuilder, packets: list[ContextPacket], history: list[dict], query: str = QUERY) -> float:
    start = time.process_time()
    builder.build_messages(query, history, "You are a coding agent.", packets)
    return time.process_time() - start


def measure(builder: ContextBuilder, n: int, runs: int, kind: str) -> dict:
    """Each run is one turn: its first call (new packets, a query never asked), then its
    next call (new packets, the same query); warm repeats the last call."""
    cold, new_query = [], []
    packets = history = query = None
    for run in range(runs):
        query = f"{QUERY} Where is retry_{n}_{run} handled?"
        history = make_history(seed=n * 1000 + run)
        new_query.append(timed_build(builder, make_packets(n, 10**7 + n * 1000 + run, kind), history, query))
        packets = make_packets(n, n * 1000 + run, kind)
        cold.append(timed_build(builder, packets, history, query))
    warm = [timed_build(builder, packets, history, query) for _ in range(runs)]
    selected = sum(r["decision"] != "dropped" for r in builder.last_report["packets"])
    return {"cold": statistics.median(cold), "new_query": statistics.median(new_query), "warm": statistics.median(warm),
            "selected": selected}


def first_build(n: int, runs: int, args: argparse.Namespace) -> float:
    """Median CPU time of the first build of n packets in `runs` fresh processes."""
    times = []
    for run in range(runs):
        cmd = [sys.executable, __file__, "--first-only", str(n), "--seed", str(run), "--model", args.model,
               "--max-tokens", str(args.max_tokens), "--text", args.text]
        times.append(float(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,500,1000,2000,5000,10000,20000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--model", default="gpt-4o")
    parser.add_argument("--max-tokens", type=int, default=16_000)
    parser.add_argument("--text", choices=("synthetic", "repo"), default="synthetic")
    parser.add_argument("--no-first", action="store_true", help="skip the fresh-process figures")
    parser.add_argument("--first-only", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_only:
        builder = new_builder(args.model, args.max_tokens)
        n = args.first_only
        print(timed_build(builder, make_packets(n, 7_000_000 + n * 10 + args.seed, args.text), make_history(args.seed)))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"text: {args.text}; Python {sys.version.split()[0]}")
    builder = new_builder(args.model, args.max_tokens)
    print(f"{'packets':>8} {'first ms':>9} {'cold ms':>9} {'new query ms':>13} {'warm ms':>9} {'cold us/packet':>15} {'selected':>9}")
    results = {}
    for n in sizes:
        first = "-" if args.no_first else f"{first_build(n, args.runs, args) * 1000:.1f}"
        row = results[n] = measure(builder, n, args.runs, args.text)
        print(f"{n:>8,} {first:>9} {row['cold'] * 1000:>9.1f} {row['new_query'] * 1000:>13.1f} {row['warm'] * 1000:>9.1f} "
              f"{row['cold'] / n * 1e6:>15.1f} {row['selected']:>9}", flush=True)
    if len(sizes) >= 2:
        a, b = sizes[-2], sizes[-1]
        slope = math.log(results[b]["cold"] / results[a]["cold"]) / math.log(b / a)
        nlogn = math.log(b * math.log(b) / (a * math.log(a))) / math.log(b / a)
        print(f"growth exponent {a:,}->{b:,}: {slope:.2f} (linear 1.00, n log n {nlogn:.2f})")


if __name__ == "__main__":
    main()
