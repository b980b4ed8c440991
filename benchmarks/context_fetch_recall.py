#!/usr/bin/env python3
"""Recall of context_fetch's file ranking on docstring -> file datasets of real packages.

Usage: python benchmarks/context_fetch_recall.py [--official] [--write-docs] [--data-dir DIR]
       python benchmarks/context_fetch_recall.py --rank CORPUS QUERY

Datasets from the external `make_dataset.py` in `$CTXAGENT_SHARED_BENCH`, cached in
~/.cache/ctxagent-bench. Method and figures: docs/benchmarks.md ("context_fetch").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ctxagent.fetch.rank import WorkspaceIndex  # noqa: E402
from ctxagent.fetch.walk import list_files  # noqa: E402
from ctxagent.storage.files import atomic_write_text  # noqa: E402
from ctxagent.tools.context_fetch import ContextFetchTool  # noqa: E402

DATASETS = ("rich==13.9.4", "click==8.1.7", "httpx==0.27.0", "prompt_toolkit==3.0.48")
BENCH = Path(os.environ.get("CTXAGENT_SHARED_BENCH", REPO.parent / "shared" / "bench"))
PRESET = {"rich": Path("/work/data/rich")}
HEADING = "## context_fetch"


def dataset_dir(spec: str, data_dir: Path) -> Path:
    """The dataset folder for `spec`, built with make_dataset.py when missing."""
    name = spec.split("==")[0]
    preset = PRESET.get(name)
    if preset is not None and (preset / "queries.jsonl").is_file():
        return preset
    target = data_dir / name
    if not (target / "queries.jsonl").is_file():
        subprocess.run([sys.executable, str(BENCH / "make_dataset.py"), spec, str(target)], check=True)
    return target


def measure(root: Path) -> dict:
    """recall@1, recall@5, MRR@10, ms/query (tool) and ms/query (rank only) on one dataset."""
    queries = [json.loads(line) for line in (root / "queries.jsonl").open(encoding="utf-8")]
    corpus = root / "corpus"
    tool = ContextFetchTool(corpus, max_files=10)
    tool.run({"query": "warm up the index", "sources": ["files"]})
    r1 = r5 = mrr = 0.0
    start = time.perf_counter()
    for q in queries:
        ranked = [f["path"] for f in tool.run({"query": q["query"], "sources": ["files"]})["sources"]["files"]]
        r1 += ranked[:1] == [q["target"]]
        r5 += q["target"] in ranked[:5]
        mrr += 1 / (ranked.index(q["target"]) + 1) if q["target"] in ranked else 0.0
    tool_ms = (time.perf_counter() - start) * 1000 / len(queries)
    index = WorkspaceIndex()
    index.refresh(list_files(corpus))
    start = time.perf_counter()
    for q in queries:
        index.rank(q["query"], limit=10)
    rank_ms = (time.perf_counter() - start) * 1000 / len(queries)
    n = len(queries)
    return {"n": n, "files": len(index), "r1": r1 / n, "r5": r5 / n, "mrr": mrr / n,
            "tool_ms": tool_ms, "rank_ms": rank_ms}


def official(root: Path) -> str:
    """evaluate.py's own figures: baselines and our ranker through its cmd: form."""
    cmd = f"{sys.executable} {Path(__file__).resolve()} --rank {root / 'corpus'}"
    proc = subprocess.run([sys.executable, str(BENCH / "evaluate.py"), str(root), "keyword", "bm25", f"cmd:{cmd}"],
                          capture_output=True, text=True, check=True)
    return re.sub(r"cmd:\S+ \S+ --rank \S+", "cmd:context_fetch", proc.stdout.strip())


def rank_main(corpus: str, query: str) -> None:
    """Print the ranked paths for one query (evaluate.py's cmd: protocol)."""
    data = ContextFetchTool(corpus, max_files=10).run({"query": query, "sources": ["files"]})
    print("\n".join(f["path"] for f in data["sources"]["files"]))


def table(rows: dict[str, dict]) -> str:
    out = ["| dataset | files | queries | recall@1 | recall@5 | MRR@10 | ms/query (tool) | ms/query (rank only) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for spec, m in rows.items():
        out.append(f"| {spec} | {m['files']} | {m['n']} | {m['r1']:.3f} | {m['r5']:.3f} | {m['mrr']:.3f} "
                   f"| {m['tool_ms']:.1f} | {m['rank_ms']:.2f} |")
    return "\n".join(out)


def write_docs(text: str) -> None:
    """Replace (or append) the `## context_fetch` section of docs/benchmarks.md only."""
    path = REPO / "docs" / "benchmarks.md"
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    section = f"{HEADING}\n\n{text.strip()}\n"
    pattern = re.compile(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", re.S | re.M)
    new = pattern.sub(lambda _: section + "\n", old, count=1) if pattern.search(old) else old.rstrip() + "\n\n" + section
    atomic_write_text(path, new.rstrip() + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rank", nargs=2, metavar=("CORPUS", "QUERY"))
    parser.add_argument("--data-dir", type=Path, default=Path.home() / ".cache" / "ctxagent-bench")
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS))
    parser.add_argument("--official", action="store_true")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    if args.rank:
        rank_main(*args.rank)
        return
    rows, official_out = {}, []
    for spec in args.datasets:
        root = dataset_dir(spec, args.data_dir)
        rows[spec] = measure(root)
        print(f"{spec}: " + ", ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}"
                                      for k, v in rows[spec].items()), flush=True)
        if args.official:
            official_out.append(f"{spec}:\n{official(root)}")
            print(official_out[-1], flush=True)
    if args.write_docs:
        write_docs(docs_text(rows, official_out))


def docs_text(rows: dict[str, dict], official_out: list[str]) -> str:
    parts = ["Docstring -> file retrieval (datasets from the external builder in `$CTXAGENT_SHARED_BENCH`), the tool's files source "
             "(BM25 over files and definition chunks with name/class/path fields, ripgrep literal bonus). "
             "Machine: this 2-core box, shared. Target: recall@5 >= 0.90 at < 50 ms/query.\n",
             "Command: `python benchmarks/context_fetch_recall.py --official --write-docs`\n", table(rows)]
    if official_out:
        parts.append("\nOfficial `evaluate.py DIR keyword bm25 cmd:...` output (cmd: runs one process per "
                     "query, so its ms/query includes Python start-up and building the index; it also puts the query "
                     "in double quotes on a shell line, so queries with backticks or `$` reach the ranker altered, "
                     "which is why its recall can differ slightly from the in-process figure):\n")
        parts.append("```\n" + "\n".join(official_out) + "\n```")
    return "\n".join(parts)


if __name__ == "__main__":
    main()
