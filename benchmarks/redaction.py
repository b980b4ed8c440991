"""Time `ctxagent.redaction.redact` on 1 MB of text, one line per kind (code, secrets, prose, noise).

Usage: python benchmarks/redaction.py [--mb 1] [--runs 5]

Best of `--runs` timeit runs of one `redact()` call, CPU time of the process.
Method and figures: docs/benchmarks.md ("Redaction").
"""

from __future__ import annotations

import argparse
import random
import time
import timeit
from pathlib import Path

from ctxagent.redaction import redact

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = ('AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n'
            'export OPENAI_API_KEY=abc123def456ghi789\npassword: hunter2horse\n'
            'DATABASE_URL = "postgres://app:s3cret-pw@db.internal:5432/app"\n'
            'headers = {"Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlMTIz"}\n')


def _sized(text: str, size: int) -> str:
    return (text * (size // max(1, len(text)) + 1))[:size]


def _texts(size: int) -> dict[str, str]:
    files = sorted([*ROOT.glob("ctxagent/**/*.py"), *ROOT.glob("docs/*.md")])
    code = _sized("".join(p.read_text(encoding="utf-8") for p in files), size)
    rng = random.Random(7)
    words = ["the", "token", "key", "is", "password", "context", "window", "secret", "of", "model", "a", "note:", "="]
    prose = _sized(" ".join(rng.choice(words) for _ in range(size // 4)), size)
    noise = "".join(rng.choice([chr(c) for c in range(0x21, 0x7F)] + [" "] * 3) for _ in range(size))
    secrets = "".join(code[i:i + 4096] + SETTINGS for i in range(0, size, 4096))[:size]
    return {"code": code, "secrets": secrets, "prose": prose, "noise": noise}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    size = int(args.mb * 1_000_000)
    for name, text in _texts(size).items():
        best = min(timeit.repeat(lambda: redact(text), number=1, repeat=args.runs, timer=time.process_time))
        changed = sum(a != b for a, b in zip(redact(text), text)) > 0
        print(f"{name:8s} {len(text) / 1e6:5.2f} MB  {best * 1000:8.1f} ms  ({best * 1000 / args.mb:6.1f} ms/MB)"
              f"  {'redacted something' if changed else 'unchanged'}")


if __name__ == "__main__":
    main()
