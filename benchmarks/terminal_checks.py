"""Cost of the issue 17 pre-checks of the terminal tool on a synthetic tree: the walk
of the git directory before each git command (S3, `git_dir.check_git_dirs`) and the
ignore-file walk before each rg (S9, `ignore_files.risky_ignore_classes`, first call and
cached). Prints one line per check, in milliseconds (best of --runs, wall time: the
walks are system calls).

Usage: python benchmarks/terminal_checks.py [--objects 20000] [--dirs 2000] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from ctxagent.shell import ignore_files
from ctxagent.shell.commands.git_dir import check_git_dirs


def _tree(root: Path, objects: int, dirs: int) -> None:
    git = root / ".git" / "objects"
    for i in range(objects):
        folder = git / f"{i % 256:02x}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{i:038x}").write_bytes(b"x")
    for i in range(dirs):
        folder = root / f"d{i % 40}" / f"s{i}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "f.txt").write_text("x\n")
        if i % 10 == 0:
            (folder / ".gitignore").write_text("*.log\n")


def _best(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=20000)
    parser.add_argument("--dirs", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(os.path.realpath(tmp))
        _tree(root, args.objects, args.dirs)
        git = str(root / ".git")
        print(f"S3 git directory walk, {args.objects} loose objects: {_best(lambda: check_git_dirs([git], str(root)), args.runs):.1f} ms")

        def first() -> None:
            ignore_files._cache.clear()
            ignore_files.risky_ignore_classes([str(root)], str(root), hidden=False)

        print(f"S9 ignore-file walk, {args.dirs} directories, first call: {_best(first, args.runs):.1f} ms")
        cached = _best(lambda: ignore_files.risky_ignore_classes([str(root)], str(root), hidden=False), args.runs)
        print(f"S9 ignore-file walk, {args.dirs} directories, cached: {cached:.1f} ms")


if __name__ == "__main__":
    main()
