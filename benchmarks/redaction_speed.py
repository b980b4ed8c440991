"""Redaction throughput in MB/s over a mixed corpus of real source files (issue 17, S7).

Usage: python benchmarks/redaction_speed.py [--mb 4] [--runs 3]

This repository's and site-packages' text files, in a fixed order, cut to `--mb` MB; best
CPU time of `--runs` calls. Figures: docs/benchmarks.md ("Throughput over real source files").
"""

from __future__ import annotations

import argparse
import sysconfig
import time
from pathlib import Path

from ctxagent.redaction import redact

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".json", ".sh", ".cfg", ".txt"}


def corpus(size: int) -> str:
    """`size` characters of real files: this repository first, then site-packages."""
    site = Path(sysconfig.get_paths()["purelib"])
    roots = [ROOT / "ctxagent", ROOT / "docs", ROOT / "tests", site]
    parts, total = [], 0
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file() or "__pycache__" in path.parts:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            parts.append(text)
            total += len(text)
            if total >= size:
                return "".join(parts)[:size]
    return "".join(parts)[:size]


def measure(text: str, runs: int) -> float:
    """Best CPU seconds of one `redact(text)` over `runs` calls."""
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        redact(text)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=4.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    text = corpus(int(args.mb * 1_000_000))
    seconds = measure(text, args.runs)
    print(f"{len(text) / 1e6:.1f} MB mixed source: {seconds * 1000:.0f} ms CPU, {len(text) / 1e6 / seconds:.1f} MB/s")


if __name__ == "__main__":
    main()
