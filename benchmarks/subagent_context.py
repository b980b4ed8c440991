"""Parent context over a task that reads 30 files: directly, or through 3 `explore` sub-agents.

Usage: python benchmarks/subagent_context.py [--files 30] [--children 3]

The real `ctxagent run` against the scripted fake model (tests/support/fake_openai.py), on a
repository of N modules of about 1,000 tokens each, one fact per module. The peak prompt of the
parent's requests is counted (o200k, exact), and the facts its last request holds (what the
parent knows when it answers: the files it read, or the children's reports).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxagent.text.tokens import TokenCounter  # noqa: E402
from tests.support.fake_openai import FakeOpenAI, text, tool_calls  # noqa: E402

COUNTER = TokenCounter("gpt-4o")


def make_repo(folder: Path, n: int) -> list[str]:
    """`m0.py`..: 60 lines of code each and one fact line; the facts, in order."""
    facts = []
    for i in range(n):
        fact = f"RETRY_LIMIT_{i} = {1000 + 37 * i}"
        body = "".join(f"def handler_{i}_{j}(request, retries={j}):  # module {i}, step {j}\n    return request\n"
                       for j in range(30))
        (folder / f"m{i}.py").write_text(body + fact + "\n", encoding="utf-8")
        facts.append(fact)
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    return facts


def _cat(i: int) -> dict:
    return tool_calls([("terminal", json.dumps({"command": f"cat m{i}.py"}))])


def direct_script(facts: list[str]) -> tuple[list[dict], list[dict]]:
    return [*(_cat(i) for i in range(len(facts))), text("Facts: " + "; ".join(facts))], []


def delegated_script(facts: list[str], children: int) -> tuple[list[dict], list[dict]]:
    share = [list(range(len(facts)))[k::children] for k in range(children)]
    calls = [("delegate", json.dumps({"agent": "explore", "task": f"PART-{k}: read m{', m'.join(map(str, part))} "
                                                                   "and report each RETRY_LIMIT line"}))
             for k, part in enumerate(share)]
    rules = [{"contains": f"PART-{k}:", "steps": [*(_cat(i) for i in part), text(
        "## Findings\n" + "\n".join(f"- `m{i}.py:61`: `{facts[i]}`" for i in part) + "\n## Not finished\n- nothing")]}
        for k, part in enumerate(share)]
    return [tool_calls(calls), text("Facts: " + "; ".join(facts))], rules


def run(folder: Path, script: list[dict], rules: list[dict], home: Path) -> tuple[list[dict], str]:
    config = home / ".config" / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[agent]\nepisodic_memory = false\nsubagent_max_steps = 40\n[model]\ncontext_window = 400000\n",
                      encoding="utf-8")
    with FakeOpenAI(script, rules=rules) as server:
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
               "CTXAGENT_BASE_URL": server.base_url, "CTXAGENT_MODEL": "fake-model", "CTXAGENT_API_KEY": "sk-bench-0000",
               "PYTHONPATH": str(ROOT), "CTXAGENT_LOCAL_MODEL": "/nonexistent"}
        exe = Path(sys.executable).parent / "ctxagent"
        proc = subprocess.run([str(exe), "run", "Collect every RETRY_LIMIT.", "--repo", str(folder)], env=env,
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise SystemExit(f"ctxagent run failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return list(server.requests), proc.stdout


def parent_peak(requests: list[dict]) -> tuple[int, int, str]:
    """(peak prompt tokens of the parent's requests, how many there were, its last request as text)."""
    parent = [r for r in requests if not any("PART-" in str(m.get("content")) for m in r["messages"] if m["role"] == "user")]
    sizes = [COUNTER.count(json.dumps(r["messages"], ensure_ascii=False)) for r in parent]
    return max(sizes), len(parent), json.dumps(parent[-1]["messages"], ensure_ascii=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=30)
    parser.add_argument("--children", type=int, default=3)
    args = parser.parse_args()
    rows = {}
    for name in ("direct", "delegated"):
        with tempfile.TemporaryDirectory() as tmp:
            folder, home = Path(tmp) / "repo", Path(tmp) / "home"
            folder.mkdir()
            home.mkdir()
            facts = make_repo(folder, args.files)
            script, rules = direct_script(facts) if name == "direct" else delegated_script(facts, args.children)
            requests, _ = run(folder, script, rules, home)
            peak, calls, last = parent_peak(requests)
            found = sum(fact in last for fact in facts)
            rows[name] = (peak, calls, len(requests), found)
            print(f"{name:10} parent peak {peak:7,} tokens over {calls} parent calls ({len(requests)} calls in all); "
                  f"facts in its last request {found}/{len(facts)}")
    ratio = rows["direct"][0] / rows["delegated"][0]
    print(f"parent's peak context: {ratio:.1f}x smaller through {args.children} sub-agents (target: at least 3x, "
          f"equal findings: {rows['direct'][3] == rows['delegated'][3] == args.files})")


if __name__ == "__main__":
    main()
