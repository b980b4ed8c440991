"""Time the look-up of custom slash commands, one line per folder size.

Usage: python benchmarks/slash_discovery.py [--files 20,100,500] [--runs 5]

Claude Code style commands whose front matter strict YAML rejects, over 10 subfolders;
first and cached look-ups, wall time. Figures: docs/benchmarks.md ("Custom slash commands").
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from ctxagent.cli.slash import custom

BODY = ("---\ndescription: command {i}\nargument-hint: [a] [b]\nallowed-tools: Read, Bash(git diff:*)\n---\n"
        "Review $1 with @src/app.py and !`git status`\n")


def _folder(root: Path, count: int) -> Path:
    repo = root / f"repo{count}"
    for i in range(count):
        path = repo / ".claude" / "commands" / f"group{i % 10}" / f"cmd{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(BODY.format(i=i), encoding="utf-8")
    return repo


def _time(repo: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    found, _ = custom.discover(repo, env=env)
    assert found
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", default="20,100,500")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {"HOME": str(Path(tmp) / "home")}
        for count in map(int, args.files.split(",")):
            repo = _folder(Path(tmp), count)
            first = []
            for _ in range(args.runs):
                custom._CACHE.clear()
                first.append(_time(repo, env))
            again = min(_time(repo, env) for _ in range(args.runs))
            print(f"{count:>5} files: first {min(first):7.1f} ms, again {again:6.1f} ms")


if __name__ == "__main__":
    main()
