"""Error of the per-character-class token estimate against exact counts.

Usage: python benchmarks/token_accuracy.py [--chunk 300]

English, Chinese, Python and mixed samples, whole and in chunks, counted with cl100k_base
and o200k_base and estimated; prints a Markdown table (docs/benchmarks.md, "Token accounting error").
"""

from __future__ import annotations

import argparse
import statistics
import sysconfig
from pathlib import Path

from ctxagent.text.tokens import estimate_tokens, exact_tokens

DATA = Path(__file__).resolve().parent / "data"
STDLIB_FILES = ("json/decoder.py", "textwrap.py", "argparse.py", "dataclasses.py")


def samples() -> dict[str, str]:
    """name -> text of each sample (see the module docstring)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    en = (DATA / "en.txt").read_text(encoding="utf-8")
    zh = (DATA / "zh.txt").read_text(encoding="utf-8")
    code = "".join((stdlib / name).read_text(encoding="utf-8") for name in STDLIB_FILES)
    return {"English": en, "Chinese": zh, "Python code": code, "mixed": en[:1500] + zh[:500] + code[:3000]}


def error(estimate: int, exact: int) -> float:
    return (estimate - exact) / exact if exact else 0.0


def chunk_errors(text: str, size: int, encoding: str) -> list[float]:
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    return [error(estimate_tokens(c), exact_tokens(c, encoding)) for c in chunks if c.strip()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunk", type=int, default=300)
    size = parser.parse_args().chunk
    print("| sample | chars | cl100k | o200k | estimate | error vs cl100k | vs o200k | chunk error vs cl100k: median [p5, p95] |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, text in samples().items():
        cl, o2, est = exact_tokens(text, "cl100k_base"), exact_tokens(text, "o200k_base"), estimate_tokens(text)
        errs = sorted(chunk_errors(text, size // 3 if name == "Chinese" else size, "cl100k_base"))
        p5, p95 = errs[int(0.05 * (len(errs) - 1))], errs[int(0.95 * (len(errs) - 1))]
        print(f"| {name} | {len(text):,} | {cl:,} | {o2:,} | {est:,} | {error(est, cl):+.1%} | {error(est, o2):+.1%} "
              f"| {statistics.median(errs):+.1%} [{p5:+.1%}, {p95:+.1%}] ({len(errs)} chunks) |")


if __name__ == "__main__":
    main()
