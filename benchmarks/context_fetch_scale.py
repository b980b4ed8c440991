#!/usr/bin/env python3
"""context_fetch at repository scale (issue 16): Django's sources, fresh processes, rg beside it.

The corpus is Django's source distribution (`pip download django==VERSION --no-binary
:all:`, cached in --data-dir), unpacked into a temporary folder with a `.ctxagent/` (as an
agent session leaves it). Each figure comes from a fresh interpreter that imports ctxagent
and calls `ContextFetchTool.run` (files source), reporting its own wall times and peak RSS:
- cold: the first call ever (it builds the on-disk index);
- warm first call: a new process, the index on disk (target: under 1 s, peak under 150 MB);
- new query: in that process, a query for a literal never asked, beside `rg -n -F` of the
  same literal over the same folder, timed here right after each process (target: at most
  1.5 times rg);
- repeated query: the same query again (served from the result cache after a re-check);
- in memory: a process on the same folder without `.ctxagent/` (what looking costs).
The load average is printed: on a shared machine every figure moves with it.

Usage: python benchmarks/context_fetch_scale.py [--version 5.1.4] [--corpus DIR] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ctxagent.fetch.files import find_rg  # noqa: E402

FIRST_QUERY = "where is the CSRF token checked against the cookie?"
LITERALS = ("get_or_create", "select_for_update", "CSRF_COOKIE_NAME")
CHILD = r"""
import json, resource, sys, time
start = time.perf_counter()
from ctxagent.tools.context_fetch import ContextFetchTool
imported = time.perf_counter()
tool = ContextFetchTool(sys.argv[1])
def call(query):
    t = time.perf_counter()
    data = tool.run({"query": query, "sources": ["files"]})
    return {"ms": (time.perf_counter() - t) * 1000, "top": [f["path"] for f in data["sources"]["files"]][:3],
            "info": data["info"]}
import ctxagent
out = {"import_ms": (imported - start) * 1000, "first": call(sys.argv[2]), "code": ctxagent.__file__}
out["new"] = [call(q) for q in sys.argv[3:]]
out["repeat"] = call(sys.argv[3]) if len(sys.argv) > 3 else None
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def corpus_dir(version: str, data_dir: Path) -> Path:
    """Django's unpacked sdist (downloaded once into `data_dir`)."""
    target = data_dir / f"Django-{version}"
    if not target.is_dir():
        data_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d",
                        str(data_dir), f"django=={version}"], check=True)
        archive = next(data_dir.glob(f"[Dd]jango-{version}.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(data_dir, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(data_dir)
    return target


def child(root: Path, first: str, *new: str) -> dict:
    """One fresh interpreter: its import time, first call, new queries, a repeat, peak MB."""
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH") or str(REPO)}  # the code measured
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, str(root), first, *new], capture_output=True, text=True,
                          env=env, check=True, cwd=root.parent)  # not here: `-c` would import this folder's code
    return {**json.loads(proc.stdout), "process_ms": (time.perf_counter() - start) * 1000}


def rg_ms(rg: str, root: Path, literal: str, runs: int) -> float:
    """Median wall ms of `rg -n -F LITERAL .` in `root` (output discarded)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([rg, "-n", "-F", "--", literal, "."], cwd=root, stdout=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(root: Path, runs: int) -> dict:
    """Every figure of the module doc, on a copy of `root` (medians over `runs` warm processes)."""
    rg = find_rg()
    if rg is None:
        raise SystemExit("ripgrep not found: install the project (the `ripgrep` wheel)")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "django"
        shutil.copytree(root, work, symlinks=True)
        files = sum(1 for p in work.rglob("*") if p.is_file())
        looking = child(work, FIRST_QUERY)
        (work / ".ctxagent").mkdir()
        cold = child(work, FIRST_QUERY)
        by_literal: dict[str, list[dict]] = {literal: [] for literal in LITERALS}
        rg_runs: dict[str, list[float]] = {literal: [] for literal in LITERALS}
        for _ in range(runs):  # rg timed right after each process, under the same load
            for literal in LITERALS:
                by_literal[literal].append(child(work, FIRST_QUERY, literal))
                rg_runs[literal].append(rg_ms(rg, work, literal, 3))
        rg_times = {literal: statistics.median(times) for literal, times in rg_runs.items()}
        db = work / ".ctxagent" / "index" / "fetch.db"
        size_mb = db.stat().st_size / 2**20
    warm = [w for runs_ in by_literal.values() for w in runs_]
    new = {literal: statistics.median(w["new"][0]["ms"] for w in runs_) for literal, runs_ in by_literal.items()}
    return {"code": cold["code"], "files": files, "looking": looking, "cold": cold, "size_mb": size_mb,
            "first_ms": statistics.median(w["first"]["ms"] for w in warm),
            "first_process_ms": statistics.median(w["process_ms"] for w in warm),
            "peak_mb": max(w["peak_mb"] for w in warm),
            "repeat_ms": statistics.median(w["repeat"]["ms"] for w in warm),
            "new_ms": new, "rg_ms": rg_times}


def report(m: dict) -> str:
    """Markdown table of the figures, with the targets."""
    rows = ["| measure | value | target |", "| --- | ---: | --- |",
            f"| files in the corpus | {m['files']} | |",
            f"| cold: first call ever (builds the index), ms | {m['cold']['first']['ms']:.0f} | |",
            f"| cold: peak RSS, MB | {m['cold']['peak_mb']:.0f} | |",
            f"| index size on disk, MB | {m['size_mb']:.0f} | |",
            f"| warm: first call of a fresh process, ms | {m['first_ms']:.0f} | under 1000 |",
            f"| warm: whole process (start, imports, call, exit), ms | {m['first_process_ms']:.0f} | |",
            f"| warm: peak RSS, MB | {m['peak_mb']:.0f} | under 150 |",
            f"| warm: repeated query, ms | {m['repeat_ms']:.0f} | |"]
    for literal, ms in m["new_ms"].items():
        rg = m["rg_ms"][literal]
        rows.append(f"| new query `{literal}`: ms / `rg -n -F` ms (ratio) | {ms:.0f} / {rg:.0f} ({ms / rg:.2f}) "
                    "| ratio at most 1.5 |")
    rows.append(f"| no `.ctxagent/` (in memory): first call, ms / peak MB | {m['looking']['first']['ms']:.0f} / "
                f"{m['looking']['peak_mb']:.0f} | |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--version", default="5.1.4")
    parser.add_argument("--corpus", type=Path, help="a source tree to use instead of Django's")
    parser.add_argument("--data-dir", type=Path, default=Path.home() / ".cache" / "ctxagent-bench")
    parser.add_argument("--runs", type=int, default=3, help="warm processes per literal")
    args = parser.parse_args()
    root = args.corpus or corpus_dir(args.version, args.data_dir)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"corpus {root}, load average {load:.1f}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    figures = measure(root, args.runs)
    print(f"code measured: {Path(figures['code']).parent.parent}")
    print(report(figures))
    print(f"top files for {FIRST_QUERY!r}: {figures['cold']['first']['top']}")


if __name__ == "__main__":
    main()
