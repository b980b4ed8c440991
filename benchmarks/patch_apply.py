"""Timings of the patch applier on large files. Prints one line per measurement.

Usage: python benchmarks/patch_apply.py [--lines 20000]

- apply: a 3-hunk patch to a file of N lines (parse + plan + backup + atomic write);
- miss: a hunk that matches nowhere (the error searches the nearest lines: difflib);
- fuzzy: a hunk that matches only in the last seek pass (typographic punctuation).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from ctxagent.errors import PatchError
from ctxagent.patch import apply_patch_text


def _file(n: int) -> str:
    return "".join(f"    value_{i} = compute({i}, 'text {i % 97}')\n" for i in range(n))


def _timed(label: str, text: str, ws: Path, n: int) -> None:
    start = time.perf_counter()
    try:
        apply_patch_text(text, ws, backup=True)
        outcome = "applied"
    except PatchError:
        outcome = "refused"
    print(f"{label:6s} {n:>7,} lines  {time.perf_counter() - start:7.3f} s  ({outcome})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=20_000)
    n = parser.parse_args().lines
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        (ws / "big.py").write_text(_file(n))
        hunks = "".join(
            f"@@\n     value_{k} = compute({k}, 'text {k % 97}')\n-    value_{k + 1} = compute({k + 1}, 'text {(k + 1) % 97}')\n"
            f"+    value_{k + 1} = 0\n" for k in (10, n // 2, n - 5))
        _timed("apply", f"*** Begin Patch\n*** Update File: big.py\n{hunks}*** End Patch\n", ws, n)
        miss = "@@\n-    value_x = compute(-1, 'nothing like this')\n+    x = 1\n"
        _timed("miss", f"*** Begin Patch\n*** Update File: big.py\n{miss}*** End Patch\n", ws, n)
        k = n - 100
        fuzzy = f"@@\n-    value_{k} = compute({k}, \u2018text {k % 97}\u2019)\n+    y = 2\n"
        _timed("fuzzy", f"*** Begin Patch\n*** Update File: big.py\n{fuzzy}*** End Patch\n", ws, n)


if __name__ == "__main__":
    main()
