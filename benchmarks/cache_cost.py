"""Prompt-cache hit and input cost of a 95-call session: ctxagent against three baselines (issue 16).

The real agent loop (`open_agent`, real tools on the real rich 13.9.4 sources, real client)
runs a scripted model (the fake OpenAI server of tests/support) with ctxagent's assembler, an
append-and-summarize one (the history as it grows, one summary at 80% of the window; its summary
request without the tool schemas as Codex sends it, or with them, "cached summary") and the whole
history every call; 1 and 4 turns, 16k and 32k windows. From all the requests the server recorded
(summary requests too): a request's cached tokens are the longest run of leading messages (tool
schemas first) it shares byte for byte with an earlier request; cost = uncached + price * cached.
Facts: user-stated, the agent's findings and first lines of tool results, in the last request.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ctxagent.agent.runtime import open_agent  # noqa: E402
from ctxagent.config.settings import AgentSettings, ContextSettings, Settings  # noqa: E402
from ctxagent.context.compaction.extractive import extractive_summary  # noqa: E402
from ctxagent.context.request import AssembledRequest  # noqa: E402
from ctxagent.llm.settings import ModelSettings  # noqa: E402
from ctxagent.text.tokens import TokenCounter  # noqa: E402
from ctxagent.validation import Secret  # noqa: E402
from tests.support.fake_openai import FakeOpenAI, text, tool_calls  # noqa: E402

COUNTER = TokenCounter("gpt-4o-mini")
CALLS = 95
OUTPUT = 2000
USELESS = '[assistant calls read_file] {"path":"a.py"}'  # ctxagent's summaries fall back to the extractive one
BASELINE_PROMPT = "Summarize the conversation so far for a handoff"
BASELINE_SUMMARY_TOKENS = 1200
USER = [
    ("Audit how rich formats sizes and widths for ticket RICH-4821. Target Python 3.9; keep the public "
     "signature of filesize.decimal() unchanged; the release branch is release/13.9.x.",
     ["RICH-4821", "Python 3.9", "filesize.decimal()", "release/13.9.x"]),
    ("FYI: the reviewer is @tlindqvist and the line length limit is 99 characters. Do not touch rich/_emoji_codes.py.",
     ["@tlindqvist", "99 characters", "rich/_emoji_codes.py"]),
    ("Also look at the cell width code; the benchmark budget is 250 ms per 10,000 cells.",
     ["250 ms", "10,000 cells"]),
    ("Last: list what the progress bar needs from filesize, and use the tag v13.9.5-rc2 in the report.",
     ["v13.9.5-rc2"]),
]


def rich_sources(given: str | None) -> Path:
    """A git repository of rich 13.9.4's sources (from `given`, or the wheel, downloaded once)."""
    work = Path(tempfile.mkdtemp(prefix="cache_cost_"))
    if given:
        source = Path(given)
    else:
        cache = Path.home() / ".cache" / "ctxagent-bench"
        wheels = sorted(cache.glob("rich-13.9.4-*.whl"))
        if not wheels:
            subprocess.run([sys.executable, "-m", "pip", "download", "rich==13.9.4", "--no-deps", "-q", "-d",
                            str(cache)], check=True)
            wheels = sorted(cache.glob("rich-13.9.4-*.whl"))
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(work / "unpacked")
        source = work / "unpacked"
    repo = work / "rich"
    (repo / "rich").mkdir(parents=True)
    for path in sorted((source / "rich").glob("*.py")):
        (repo / "rich" / path.name).write_bytes(path.read_bytes())
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "rich 13.9.4"], cwd=repo,
                   check=True)
    return repo


def script(repo: Path, turns: int) -> tuple[list[dict], list[str], list[str], list[str]]:
    """(fake server steps, the user messages, the agent's findings, the ids of the calls whose
    result's first line is a fact): CALLS model calls in all, each turn ending with a text
    answer; a finding every 4th call, a todo update every 9th, a note every 23rd; reads of
    150-line spans, greps and line counts of rich's modules; every 4th grep's first hit a fact."""
    files = sorted(p.name for p in (repo / "rich").glob("*.py") if p.stat().st_size > 3000)
    messages = [u for u, _ in USER] if turns == 4 else [" ".join(u for u, _ in USER)]
    tool_rounds = CALLS - len(messages)
    per_turn = [tool_rounds // len(messages) + (1 if i < tool_rounds % len(messages) else 0)
                for i in range(len(messages))]
    steps, findings, fact_calls, k = [], [], [], 0
    for turn, rounds in enumerate(per_turn):
        for _ in range(rounds):
            name = files[k % len(files)]
            lines = (repo / "rich" / name).read_text(encoding="utf-8").count("\n")
            content = None
            if k % 4 == 3:
                finding = f"rich/{name} has {lines} lines"
                findings.append(finding)
                content = f"Finding: {finding}."
            if k % 9 == 4:
                call = ("todo", {"action": "add", "content": f"check rich/{name}", "status": "in_progress"})
            elif k % 23 == 11:
                call = ("note", {"action": "create", "title": f"rich/{name}", "note_type": "conclusion",
                                 "content": f"rich/{name} was read; {lines} lines."})
            elif k % 3 == 0:
                call = ("terminal", {"command": f"grep -n -E \"^(def|class) \" rich/{name}"})
                if k % 4 == 0:
                    fact_calls.append(f"call_{k}")
            elif k % 3 == 1:
                start = 1 + 150 * (k // len(files) % 3)
                call = ("terminal", {"command": f"sed -n {start},{start + 149}p rich/{name}"})
            else:
                call = ("terminal", {"command": f"wc -l rich/{name}"})
            steps.append(tool_calls([{"name": call[0], "arguments": json.dumps(call[1]), "id": f"call_{k}"}],
                                    content=content))
            k += 1
        steps.append(text(f"Turn {turn + 1} done."))
    return steps, messages, findings, fact_calls


class AppendAndSummarize:
    """Baseline: the history as it grows; past 80% of the window, one summary request (the
    whole history and an instruction: without the tool schemas as Codex sends it, or with them,
    `cached`, so it keeps the conversation's cached prefix) and the history replaced by the task,
    a short summary (our extractive one, standing in for the model's) and the newest request."""

    def __init__(self, model: Any, client: Any, cached: bool = False) -> None:
        self.window, self.client, self.cached = model.context_window, client, cached
        self.base: list[dict] | None = None  # the replaced history, then the messages after `seen`
        self.seen = 0

    def assemble(self, history: list[dict], tools: list[dict], state: dict) -> AssembledRequest:
        messages = self._view(history)
        if COUNTER.count_messages(messages, tools) > 0.8 * self.window:
            self.client.chat([*messages, {"role": "user", "content": BASELINE_PROMPT}],
                             tools=tools if self.cached else None)
            convo = messages[1:]
            users = [m for m in convo if m.get("role") == "user"]
            summary = extractive_summary(convo, fits=lambda t: COUNTER.count(t) <= BASELINE_SUMMARY_TOKENS)
            self.base = [messages[0], users[0], {"role": "user", "content": f"Summary of the work so far:\n{summary}"},
                         *([users[-1]] if users[-1] is not users[0] else [])]
            self.seen = len(history)
            messages = self._view(history)
        return AssembledRequest(messages=messages, report={"assembler": "append-and-summarize"})

    def _view(self, history: list[dict]) -> list[dict]:
        if self.base is None:
            return list(history)
        tail = history[self.seen:]
        while tail and tail[0].get("role") == "tool":  # results of a call the summary covers
            tail = tail[1:]
        return [*self.base, *tail]


class WholeHistory:
    """Baseline: the whole history every call, whatever the window."""

    def assemble(self, history: list[dict], tools: list[dict], state: dict) -> AssembledRequest:
        return AssembledRequest(messages=list(history), report={"assembler": "whole history"})


def run(repo: Path, strategy: str, window: int, turns: int, context: dict | None = None) -> dict:
    steps, messages, findings, fact_calls = script(repo, turns)
    rules = [{"contains": "You are compacting", "step": text(USELESS)},
             {"contains": BASELINE_PROMPT, "step": text("summary")}]
    work = Path(tempfile.mkdtemp(prefix="cache_run_")) / "rich"
    subprocess.run(["git", "clone", "-q", str(repo), str(work)], check=True)
    factories = {"ctxagent": None,
                 "append-and-summarize": lambda s, r, sess, client, **kw: AppendAndSummarize(s.model, client),
                 "append-and-summarize (cached summary)":
                     lambda s, r, sess, client, **kw: AppendAndSummarize(s.model, client, cached=True),
                 "whole history": lambda s, r, sess, client, **kw: WholeHistory()}
    with FakeOpenAI(steps, rules=rules) as server:
        settings = Settings(model=ModelSettings(provider="custom", model="gpt-4o-mini", base_url=server.base_url,
                                                api_key=Secret("sk-bench-0123456789abcdef"), max_retries=0,
                                                timeout_s=30, context_window=window, max_output_tokens=OUTPUT),
                            agent=AgentSettings(tools=["terminal", "todo", "note"], episodic_memory=False,
                                                auto_approve=True, max_steps=200),
                            context=ContextSettings(**(context or {})))
        with open_agent(work, settings, assembler_factory=factories[strategy]) as agent:
            for message in messages:
                agent.run_turn(message)
            history = agent.session.history
        requests = list(server.requests)
    heads = [first_line(m["content"]) for m in history if m.get("role") == "tool" and m["tool_call_id"] in fact_calls]
    facts = [f for _, fs in USER for f in fs] + findings + [h for h in heads if h]
    return {**measure(requests), "facts": kept(requests, facts), "n_facts": len(facts)}


def first_line(text: str) -> str:
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")


def kept(requests: list[dict], facts: list[str]) -> int:
    main = [r for r in requests if not any(p in json.dumps(r["messages"]) for p in ("You are compacting",
                                                                                     BASELINE_PROMPT))]
    sent = json.dumps(main[-1]["messages"], ensure_ascii=False)
    return sum(json.dumps(f, ensure_ascii=False)[1:-1] in sent for f in facts)


def measure(requests: list[dict]) -> dict:
    """Tokens in, cached (leading messages shared byte for byte with an earlier request), and cost."""
    total = cached = 0
    earlier: list[list[str]] = []
    for body in requests:
        parts = [json.dumps(body.get("tools"), sort_keys=True)] + [json.dumps(m, sort_keys=True) for m in
                                                                   body["messages"]]
        tokens = [COUNTER.count_tools(body.get("tools"))] + [COUNTER.count_message(m) for m in body["messages"]]
        shared = max((_common(parts, e) for e in earlier), default=0)
        total += sum(tokens)
        cached += sum(tokens[:shared])
        earlier.append(parts)
    miss = total - cached
    return {"calls": len(requests), "tokens": total, "cached": cached, "hit": cached / max(1, total),
            "cost_01": miss + 0.1 * cached, "cost_05": miss + 0.5 * cached}


def _common(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rich", help="a folder holding rich/ (default: rich 13.9.4's wheel, downloaded once)")
    parser.add_argument("--windows", default="16000,32000")
    parser.add_argument("--turns", default="1,4")
    parser.add_argument("--agents", default="ctxagent,append-and-summarize,append-and-summarize (cached summary),"
                                            "whole history")
    parser.add_argument("--context", default="", help="[context] keys for ctxagent, e.g. compaction_target_ratio=0.4")
    args = parser.parse_args()
    repo = rich_sources(args.rich)
    context = {k: int(v) if v.isdigit() else float(v) for k, v in (kv.split("=") for kv in args.context.split(",") if kv)}
    print("| window | turns | agent | requests | input tokens | cache hit | cost, hit = 0.1 | cost, hit = 0.5 | "
          "facts in the last request |\n|---|---|---|---:|---:|---:|---:|---:|---:|", flush=True)
    for window in (int(w) for w in args.windows.split(",")):
        for turns in (int(t) for t in args.turns.split(",")):
            for strategy in args.agents.split(","):
                r = run(repo, strategy, window, turns, context)
                print(f"| {window:,} | {turns} | {strategy} | {r['calls']} | {r['tokens']:,} | {r['hit']:.1%} | "
                      f"{r['cost_01']:,.0f} | {r['cost_05']:,.0f} | {r['facts']}/{r['n_facts']} |", flush=True)


if __name__ == "__main__":
    main()
