"""Build time of ContextBuilder against the number of candidate packets.

Usage: python benchmarks/context_build.py [--sizes 100,500,1000,2000,5000,10000,20000]
       [--runs 5] [--model gpt-4o] [--max-tokens 16000]

Each build gets n packets (memory, rag, note and custom; 80-600 characters of English
words, code identifiers and Chinese, ~300 on average) plus a 20-message history, and
selects under a 16,000-token window with exact o200k counting. Two figures per n, the
median of --runs builds of `build_messages`:

- cold: every packet is new (fresh texts each run), so no token count or term list is
  cached: the worst case;
- warm: the same packets again, as in an agent loop where memory, notes and history
  repeat from one model call to the next (counts and term lists come from caches).

Times are CPU time of this process (`time.process_time`): the machine is shared, and
wall-clock time would mostly measure the other processes.

The growth exponent is the log-log slope of the cold time between the two largest
sizes (1.0 = linear; n log n between 1,000 and 20,000 gives about 1.1-1.2).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time

from ctxagent.context import ContextBuilder, ContextConfig, ContextPacket

WORDS = ("the parser reads config files and builds a context with budget tokens layer evidence history tool result "
         "git commit note state memory window model query select score relevance recency").split()
CODE = ("parse_cfg ContextBuilder load_settings TokenCounter repair_pairing history_units apply_patch "
        "src/app.py tests/test_app.py __init__ self.config return None").split()
CJK = ("内存", "优化", "上下文", "预算", "检索", "笔记", "历史", "工具", "结果", "配置", "数据", "模型")
TYPES = ("memory", "rag", "note", "custom")
NOW = 1_700_000_000.0


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


def make_packets(n: int, seed: int) -> list[ContextPacket]:
    rng = random.Random(seed)
    return [ContextPacket(packet_text(rng), timestamp=NOW - rng.uniform(0, 86_400), metadata={"type": rng.choice(TYPES)})
            for _ in range(n)]


def make_history(seed: int) -> list[dict]:
    rng = random.Random(seed)
    return [{"role": ("user", "assistant")[i % 2], "content": packet_text(rng)} for i in range(20)]


def timed_build(builder: ContextBuilder, packets: list[ContextPacket], history: list[dict]) -> float:
    start = time.process_time()
    builder.build_messages("How does parse_cfg load the config budget? 内存优化", history, "You are a coding agent.", packets)
    return time.process_time() - start


def measure(n: int, runs: int, model: str, max_tokens: int) -> tuple[float, float, int]:
    builder = ContextBuilder(config=ContextConfig(max_tokens=max_tokens), model=model, clock=lambda: NOW)
    cold = []
    packets = history = None
    for run in range(runs):
        packets, history = make_packets(n, seed=n * 1000 + run), make_history(seed=n * 1000 + run)
        cold.append(timed_build(builder, packets, history))
    warm = [timed_build(builder, packets, history) for _ in range(runs)]
    selected = sum(r["decision"] != "dropped" for r in builder.last_report["packets"])
    return statistics.median(cold), statistics.median(warm), selected


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,500,1000,2000,5000,10000,20000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--model", default="gpt-4o")
    parser.add_argument("--max-tokens", type=int, default=16_000)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    ContextBuilder(model=args.model).build_messages("warm up the tokenizer")
    print(f"{'packets':>8} {'cold ms':>9} {'warm ms':>9} {'cold us/packet':>15} {'selected':>9}")
    results = {}
    for n in sizes:
        cold, warm, selected = measure(n, args.runs, args.model, args.max_tokens)
        results[n] = cold
        print(f"{n:>8,} {cold * 1000:>9.1f} {warm * 1000:>9.1f} {cold / n * 1e6:>15.1f} {selected:>9}")
    if len(sizes) >= 2:
        a, b = sizes[-2], sizes[-1]
        slope = math.log(results[b] / results[a]) / math.log(b / a)
        nlogn = math.log(b * math.log(b) / (a * math.log(a))) / math.log(b / a)
        print(f"growth exponent {a:,}->{b:,}: {slope:.2f} (linear 1.00, n log n {nlogn:.2f})")


if __name__ == "__main__":
    main()
