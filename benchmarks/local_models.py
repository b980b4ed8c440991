"""Which bundled offline model finishes simple exploration tasks more often?

Usage: python benchmarks/local_models.py [--models smollm2,gemma3] [--policies guided,free]
       [--tasks 4] [--repeats 1] [--max-steps 8] [--write-docs]

Each task runs through the real agent loop on a fresh clone, per TurnPolicy; `--write-docs`
replaces the "Offline model" section. Measures: docs/benchmarks.md ("Offline model").
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxagent.agent.runtime import open_agent  # noqa: E402
from ctxagent.config.settings import load_settings  # noqa: E402
from ctxagent.llm.local.server import LocalServer  # noqa: E402

TASKS: list[tuple[str, tuple[str, ...]]] = [
    ("List the files in this repository and say what the project is.", ("ctxagent", "agent")),
    ("Which Python package folder does this repository contain? Answer with its name.", ("ctxagent",)),
    ("Read README.md and summarise in one sentence what this project does.", ("agent", "context")),
    ("What name and version does pyproject.toml give this project?", ("0.1.0",)),
    ("In which file is the class ToolResult defined?", ("base.py",)),
    ("How many tests folders are there under tests/? Name them.", ("llm", "tools", "agent")),
]
POLICIES = {"guided": {"call_first": True, "max_calls": 3, "no_repeat": True},
            "free": {"call_first": False, "max_calls": 0, "no_repeat": False}}


class Recorder:
    """An event sink that keeps what the benchmark counts."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.results: list[dict[str, Any]] = []
        self.end: dict[str, Any] | None = None

    def __call__(self, event: Any) -> None:
        data = event.to_dict()
        kind = data["type"]
        if kind == "tool_call":
            self.calls.append(data)
        elif kind == "tool_result":
            self.results.append(data)
        elif kind == "turn_end":
            self.end = data


def clone_repo(dest: Path) -> Path:
    """A fresh clone of this repository's HEAD at `dest` (what a new user has)."""
    subprocess.run(["git", "clone", "-q", str(ROOT), str(dest)], check=True)
    return dest


def run_task(server: LocalServer, repo: Path, task: str, keywords: tuple[str, ...], max_steps: int) -> dict:
    """One task through the real loop; returns the measured row."""
    flags = {"provider": "custom", "base_url": server.base_url, "model": server.model.alias, "max_steps": max_steps}
    settings = load_settings(repo, flags, require_key=False)
    model = server.settings().replace(provider="custom")
    settings = settings.replace(model=model)
    rec = Recorder()
    started = time.monotonic()
    with open_agent(repo, settings, sinks=[rec]) as agent:
        agent.run_turn(task)
    end = rec.end or {}
    answer = (end.get("answer") or "").lower()
    return {
        "finished": end.get("reason") == "finished" and bool(answer.strip()),
        "reason": end.get("reason"), "steps": end.get("steps", 0),
        "calls": len(rec.calls), "valid": sum(r["status"] == "ran" for r in rec.results),
        "ok": sum(bool(r["ok"]) for r in rec.results),
        "grounded": any(k.lower() in answer for k in keywords) and not _echoes_prompt(answer),
        "seconds": time.monotonic() - started,
        "commands": [c["arguments"][:80] for c in rec.calls],
        "answer": (end.get("answer") or end.get("message") or "")[:160],
    }


def _echoes_prompt(answer: str) -> bool:
    """True when the "answer" is the system prompt or tool list read back (a base model's
    habit): its keywords are then no sign of having looked."""
    return any(marker in answer for marker in ("you are ctxagent", "workspace:", "<tool_call>", "# tools"))


def bench(model: str, policy: str, tasks: list, repeats: int, max_steps: int, workdir: Path) -> list[dict]:
    """All runs of one (model, policy); prints each row as it finishes."""
    rows = []
    with LocalServer(model, **POLICIES[policy]) as server:
        for r in range(repeats):
            for i, (task, keywords) in enumerate(tasks):
                repo = clone_repo(workdir / f"{model}-{policy}-{r}-{i}")
                row = run_task(server, repo, task, keywords, max_steps)
                rows.append(row)
                print(f"{model:8} {policy:6} task {i + 1}: {row['reason']:9} steps {row['steps']} "
                      f"calls {row['calls']} valid {row['valid']} ok {row['ok']} grounded {row['grounded']} "
                      f"{row['seconds']:.0f} s | {row['commands']} | {row['answer']!r}", flush=True)
    return rows


def summarise(rows: list[dict]) -> dict[str, Any]:
    """Rates over runs: finished, valid calls per call, ok calls per call, grounded; mean seconds."""
    calls = sum(r["calls"] for r in rows)
    return {
        "runs": len(rows),
        "finished": sum(r["finished"] for r in rows) / len(rows),
        "valid": sum(r["valid"] for r in rows) / calls if calls else 0.0,
        "ok": sum(r["ok"] for r in rows) / calls if calls else 0.0,
        "grounded": sum(r["grounded"] for r in rows) / len(rows),
        "calls": calls / len(rows),
        "seconds": statistics.mean(r["seconds"] for r in rows),
    }


def table(results: dict[tuple[str, str], dict]) -> str:
    """The Markdown table of all summaries."""
    lines = ["| model | policy | runs | finished | valid calls | successful calls | grounded answer "
             "| calls/run | mean s/run |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (model, policy), s in results.items():
        lines.append(f"| {model} | {policy} | {s['runs']} | {s['finished']:.0%} | {s['valid']:.0%} | {s['ok']:.0%} "
                     f"| {s['grounded']:.0%} | {s['calls']:.1f} | {s['seconds']:.0f} |")
    return "\n".join(lines)


def write_docs(section: str, path: Path = ROOT / "docs" / "benchmarks.md") -> None:
    """Replace (or append) the '## Offline model' section of docs/benchmarks.md."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    head, sep, rest = text.partition("\n## Offline model\n")
    tail = ""
    if sep:
        nxt = rest.find("\n## ")
        tail = rest[nxt:] if nxt != -1 else ""
    path.write_text(head.rstrip("\n") + "\n\n## Offline model\n\n" + section.strip() + "\n" + tail, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="smollm2,gemma3")
    p.add_argument("--policies", default="guided,free")
    p.add_argument("--tasks", type=int, default=len(TASKS))
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=8)
    p.add_argument("--write-docs", action="store_true")
    args = p.parse_args(argv)
    results: dict[tuple[str, str], dict] = {}
    with tempfile.TemporaryDirectory(prefix="ctxagent-bench-") as tmp:
        for model in args.models.split(","):
            for policy in args.policies.split(","):
                rows = bench(model, policy, TASKS[: args.tasks], args.repeats, args.max_steps, Path(tmp))
                results[(model, policy)] = summarise(rows)
    out = table(results)
    print(out)
    if args.write_docs:
        cmd = "python benchmarks/local_models.py " + " ".join(argv if argv is not None else sys.argv[1:])
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        write_docs(f"`{cmd.strip()}` on {platform.machine()}, {os.cpu_count()} cores "
                   f"(load average {load:.1f} at the end: other jobs share the machine, so seconds are "
                   f"rough), llama-cpp-python built with GGML_NATIVE=OFF, n_ctx 8192, 2 threads.\n\n{out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
