#!/usr/bin/env python3
"""Start-up time of the commands that need no model (issue 16), beside `python -c pass`.

Runs, interleaved, `python -c pass`, `ctxagent --help` and `ctxagent tool terminal
'{"command": "ls"}'` (in a small temporary repository) --runs times each and prints the
median wall time of each in ms and as a ratio to `python -c pass` of the same run, so a
loaded machine shows in the baseline. Targets: --help under 150 ms, tool terminal under
250 ms. The console script beside this interpreter is used (else `python -m ctxagent`).
Compiled bytecode is allowed (PYTHONDONTWRITEBYTECODE is dropped; the first, untimed
round writes it), as in any installed package; --keep-env keeps the environment as is.

Usage: python benchmarks/startup.py [--runs 15] [--keep-env]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGETS_MS = {"ctxagent --help": 150, "ctxagent tool terminal ls": 250}


def ctxagent_argv() -> list[str]:
    """The console script beside sys.executable, else `python -m ctxagent`."""
    script = Path(sys.executable).with_name("ctxagent")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "ctxagent"]


def commands() -> dict[str, list[str]]:
    """name -> argv of each command timed."""
    base = ctxagent_argv()
    return {"python -c pass": [sys.executable, "-c", "pass"], "ctxagent --help": [*base, "--help"],
            "ctxagent tool terminal ls": [*base, "tool", "terminal", '{"command": "ls"}']}


def environment(keep: bool, home: Path) -> dict[str, str]:
    """The child environment: no API keys, a private HOME, this checkout first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN")) and not k.startswith("CTXAGENT_")}
    if not keep:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), PYTHONPATH=str(REPO))
    return env


def time_once(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Wall time of one run in ms; raises if the command fails."""
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def measure(runs: int, keep_env: bool) -> dict[str, float]:
    """Median ms of each command over `runs` interleaved rounds (after one untimed round)."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        for name in ("README.md", "main.py", "util.py"):
            (repo / name).write_text(f"# {name}\n", encoding="utf-8")
        env = environment(keep_env, Path(tmp) / "home")
        cmds = commands()
        samples: dict[str, list[float]] = {name: [] for name in cmds}
        for round_ in range(runs + 1):
            for name, argv in cmds.items():
                elapsed = time_once(argv, repo, env)
                if round_:
                    samples[name].append(elapsed)
        created = (repo / ".ctxagent").exists()
    print(f"looking created .ctxagent/: {'yes' if created else 'no'}")
    return {name: statistics.median(values) for name, values in samples.items()}


def report(medians: dict[str, float]) -> str:
    """A Markdown table: median ms, ratio to `python -c pass`, target."""
    base = medians["python -c pass"]
    rows = ["| command | median ms | x `python -c pass` | target ms |", "| --- | ---: | ---: | ---: |"]
    for name, value in medians.items():
        target = TARGETS_MS.get(name)
        rows.append(f"| `{name}` | {value:.0f} | {value / base:.1f} | {target if target else '-'} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--keep-env", action="store_true", help="keep PYTHONDONTWRITEBYTECODE if set")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{args.runs} runs each, load average {load:.1f}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    print(report(measure(args.runs, args.keep_env)))


if __name__ == "__main__":
    main()
