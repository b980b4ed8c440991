"""Checkpoint cost on a 20,000-file repository: first and next checkpoints, ms and new bytes.

Usage: python benchmarks/checkpoint_cost.py [--files 20000] [--runs 5] [--seed 0] [--git]

Times `CheckpointStore.record` on a synthetic tree (first, next after one change,
unchanged, changes_since). Target (issue 11): next < 300 ms and < 5% of the repository in
new bytes. Method and figures: docs/benchmarks.md ("Checkpoints").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from ctxagent.exec.checkpoints import CheckpointStore

SOURCES = Path(__file__).resolve().parent.parent / "ctxagent"
KINDS = (("py", 0.55), ("js", 0.2), ("md", 0.15), ("json", 0.1))


def corpus() -> list[str]:
    """Text of this repository's modules and docs: real vocabulary and line shapes."""
    texts = [p.read_text(encoding="utf-8") for p in sorted(SOURCES.rglob("*.py"))]
    texts += [p.read_text(encoding="utf-8") for p in sorted(SOURCES.parent.glob("docs/*.md"))]
    return [t for t in texts if len(t) > 200]


def make_file(rng: random.Random, texts: list[str], kind: str, n: int) -> str:
    """A file of a log-normal size (median ~3 KB) cut from the corpus, identifiers renamed."""
    size = int(min(120_000, max(80, rng.lognormvariate(8.0, 1.0))))
    text = rng.choice(texts)
    start = rng.randrange(max(1, len(text) - size)) if len(text) > size else 0
    body = (text * (size // len(text) + 1))[start:start + size]
    body = re.sub(r"\b(def|class|function) (\w+)", lambda m: f"{m.group(1)} {m.group(2)}_{n}", body)
    if kind == "json":
        return json.dumps({"name": f"pkg{n}", "lines": body.splitlines()[:50]}, indent=1) + "\n"
    return f"// module {n}\n{body}\n" if kind == "js" else body


def make_repo(root: Path, files: int, seed: int) -> int:
    """Write `files` files (and 1,000 ignored ones); returns the tracked bytes."""
    rng = random.Random(seed)
    texts = corpus()
    total = 0
    (root / ".gitignore").write_text("build/\n*.pyc\n")
    for n in range(files):
        kind = rng.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
        folder = root / f"pkg{n % 40}" / f"sub{(n // 40) % 25}"
        folder.mkdir(parents=True, exist_ok=True)
        data = make_file(rng, texts, kind, n).encode()
        (folder / f"mod{n}.{kind}").write_bytes(data)
        total += len(data)
    (root / "build").mkdir()
    for n in range(1000):
        (root / "build" / f"out{n}.o").write_bytes(os.urandom(256))
    return total


def store_size(root: Path) -> tuple[int, int]:
    """(apparent bytes, disk bytes) of everything under `root`."""
    apparent = disk = 0
    for folder, _dirs, names in os.walk(root):
        for name in names:
            info = os.lstat(os.path.join(folder, name))
            apparent += info.st_size
            disk += info.st_blocks * 512
    return apparent, disk


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - start) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--git", action="store_true", help="make the tree a git repository with one commit")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ckpt-bench-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        t0 = time.perf_counter()
        size = make_repo(repo, args.files, args.seed)
        print(f"repository: {args.files:,} files, {size / 1e6:.1f} MB (built in {time.perf_counter() - t0:.1f} s)")
        if args.git:
            for cmd in (["init", "-q"], ["add", "-A"], ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"]):
                subprocess.run(["git", *cmd], cwd=repo, check=True)
        store = CheckpointStore.for_repo(repo)
        _, first_ms = timed(lambda: store.record(session_id="bench", turn=0, tool="bench", label="first"))
        first = store_size(store.root)
        print(f"first checkpoint: {first_ms:.0f} ms, store {first[0] / 1e6:.1f} MB apparent, {first[1] / 1e6:.1f} MB on disk")
        rng = random.Random(args.seed + 1)
        targets = sorted(repo.glob("pkg*/sub*/mod*.py"))
        times, grew, grew_disk, after_ms = [], [], [], []
        for run in range(args.runs):
            before = store_size(store.root)
            target = rng.choice(targets)
            target.write_text(target.read_text() + f"\n# edit {run}\n")
            cp, ms = timed(lambda: store.record(session_id="bench", turn=run + 1, tool="bench", label="next"))
            now = store_size(store.root)
            times.append(ms)
            grew.append(now[0] - before[0])
            grew_disk.append(now[1] - before[1])
            _, ams = timed(lambda: store.changes_since(cp))
            after_ms.append(ams)
        _, same_ms = timed(lambda: store.record(session_id="bench", turn=99, tool="bench", label="same"))
        med = statistics.median
        print(f"next checkpoint (one file changed, median of {args.runs}): {med(times):.0f} ms "
              f"(min {min(times):.0f}, max {max(times):.0f}); new bytes {med(grew):,.0f} apparent, "
              f"{med(grew_disk):,.0f} on disk = {100 * med(grew_disk) / size:.3f}% of the repository")
        print(f"changes_since after it: {med(after_ms):.0f} ms; checkpoint with nothing changed: {same_ms:.0f} ms")
        ok = med(times) < 300 and med(grew_disk) < 0.05 * size
        print("target (next < 300 ms, < 5% new bytes):", "met" if ok else "MISSED")


if __name__ == "__main__":
    main()
