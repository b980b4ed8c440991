"""SIGKILL at a random moment of a 30-file patch: after the next start, is every tree whole?

Usage: python benchmarks/patch_sigkill.py [--runs 300] [--files 30] [--seed 0] [--signal KILL|TERM|INT]

Counts *mixed* trees and `.ctxtmp-*` leftovers after `recover_pending`; target (issue 17,
S5): 0 and 0. Method and figures: docs/benchmarks.md ("Patches under SIGKILL").
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ctxagent.storage.journal import recover_pending

OLD, NEW = "value = 1\n", "value = 2\n"
CHILD = """
import sys
from ctxagent.tools.patch import ApplyPatchTool
repo, patch = sys.argv[1], open(sys.argv[2]).read()
print("ready", flush=True)
result = ApplyPatchTool(workspace=repo, max_files=100).execute({"patch": patch})
assert result.ok, result.content
"""


def make_repo(root: Path, files: int) -> str:
    """N files f00.py ... under `root`; returns the patch that changes all of them."""
    root.mkdir()
    body = []
    for i in range(files):
        (root / f"f{i:02d}.py").write_text(OLD)
        body.append(f"*** Update File: f{i:02d}.py\n@@\n-value = 1\n+value = 2\n")
    return "*** Begin Patch\n" + "".join(body) + "*** End Patch\n"


def one_run(base: Path, files: int, rng: random.Random, sig: int = signal.SIGKILL) -> tuple[str, bool, bool]:
    """(state: old | new | mixed, a leftover in the source tree, one in .ctxagent/) for one killed run."""
    repo = base / "repo"
    patch = make_repo(repo, files)
    (base / "patch.txt").write_text(patch)
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(repo), str(base / "patch.txt")],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    assert proc.stdout is not None
    proc.stdout.readline()  # "ready": imports done, the patch is about to be applied
    time.sleep(rng.uniform(0.0, 1.5))  # the apply takes about 1 s here (plan, fsyncs)
    os.killpg(proc.pid, sig)  # the whole group: the checkpoint's git processes die with it, as in a terminal
    proc.wait()
    recover_pending(repo)
    texts = {(repo / f"f{i:02d}.py").read_text() for i in range(files)}
    temps = [p.relative_to(repo).parts for p in repo.rglob("*") if p.name.startswith(".ctxtmp-")]
    state = "new" if texts == {NEW} else "old" if texts == {OLD} else "mixed"
    return state, any(parts[0] != ".ctxagent" for parts in temps), any(parts[0] == ".ctxagent" for parts in temps)


def run(runs: int, files: int, seed: int, sig: int = signal.SIGKILL) -> dict[str, int]:
    """Counts of old, new and mixed trees, and of runs with leftovers, over `runs` killed runs."""
    rng = random.Random(seed)
    counts = {"old": 0, "new": 0, "mixed": 0, "leftovers": 0, "state_dir_temps": 0}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            state, leftover, state_dir_temp = one_run(Path(tmp), files, rng, sig)
            counts[state] += 1
            counts["leftovers"] += leftover
            counts["state_dir_temps"] += state_dir_temp
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--files", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--signal", choices=["KILL", "TERM", "INT"], default="KILL")
    args = parser.parse_args()
    start = time.monotonic()
    counts = run(args.runs, args.files, args.seed, getattr(signal, f"SIG{args.signal}"))
    print(f"SIG{args.signal}, {args.runs} runs, {args.files} files: {counts['old']} old, {counts['new']} new, "
          f"{counts['mixed']} mixed, {counts['leftovers']} with leftover temporary files in the source tree, "
          f"{counts['state_dir_temps']} with one in .ctxagent/ "
          f"({time.monotonic() - start:.0f} s)")


if __name__ == "__main__":
    main()
