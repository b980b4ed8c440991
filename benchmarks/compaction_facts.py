"""How many key facts survive compaction: a long recorded session, and one turn of the real loop.

Usage: python benchmarks/compaction_facts.py [--llm] [--window N] [--agent-calls N --agent-window N]

Runs replay, direct and baseline on `benchmarks/data/long_session.jsonl` with its 22 user-stated
facts (`long_session_facts.json`; extractive summaries unless `--llm`), then one turn of the real
loop against the fake server whose facts the agent finds (`tests/support/found_facts.py`), with 3
or more compactions; exits 1 if a fact is missing. Figures: docs/benchmarks.md ("Compaction").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from itertools import chain
from pathlib import Path
from typing import Callable, Iterator

from ctxagent.context.assembler import ContextAssembler
from ctxagent.context.compaction.compactor import Budget, compact_conversation
from ctxagent.context.messages import history_units
from ctxagent.llm.settings import ModelSettings
from ctxagent.text.tokens import TokenCounter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.found_facts import run_session  # noqa: E402

DATA = Path(__file__).parent / "data"
SYSTEM = {"role": "system", "content": "You are ctxagent, a coding agent working in a terminal."}
USELESS = '[assistant calls read_file] {"path":"a.py"}'
COUNTER = TokenCounter("gpt-4o-mini")


def load() -> tuple[list[dict], list[dict]]:
    lines = (DATA / "long_session.jsonl").read_text(encoding="utf-8").splitlines()
    messages = [json.loads(line)["message"] for line in lines if line.strip()]
    return messages, json.loads((DATA / "long_session_facts.json").read_text(encoding="utf-8"))


def surviving(messages: list[dict], facts: list[dict], users_seen: int) -> tuple[int, int, list[str]]:
    """(facts surviving, facts stated so far, the missing ones) in a request."""
    text = "\n".join(str(m.get("content") or "") for m in messages)
    stated = [f["fact"] for f in facts if f["message"] < users_seen]
    missing = [f for f in stated if f not in text]
    return len(stated) - len(missing), len(stated), missing


def replay(messages, facts, window, output, summarize) -> Iterator[dict]:
    model = ModelSettings(model="gpt-4o-mini", context_window=window, max_output_tokens=output)
    assembler = ContextAssembler(model, counter=COUNTER, summarize=summarize, snapshots=False, load_state=None)
    rows, history, users = [], [SYSTEM], 0
    for message in messages:
        if message["role"] == "assistant":
            start = time.perf_counter()
            request = assembler.assemble(history, [], {"turn": users})
            elapsed = (time.perf_counter() - start) * 1000
            record = request.report["compaction"]
            if record:
                rows.append(record)
                yield _row(f"replay #{len(rows)}", record, request.messages, facts, users, elapsed)
        users += message["role"] == "user"
        history.append(message)
    request = assembler.assemble(history, [], {"turn": users})
    yield _row("replay, final request", None, request.messages, facts, users, None)


def _row(name, record, messages, facts, users, ms) -> dict:
    ok, total, missing = surviving(messages, facts, users)
    return {"run": name, "method": record["method"] if record else "-",
            "tokens": f"{record['tokens_before']:,} -> {record['tokens_after']:,}" if record else
            f"{COUNTER.count_messages(messages):,}", "facts": f"{ok}/{total}", "missing": missing,
            "ms": f"{ms:.0f}" if ms is not None else "-"}


def direct(messages, facts, limit, summarize) -> Iterator[dict]:
    measure = lambda convo: COUNTER.count_messages([SYSTEM, *convo])  # noqa: E731
    budget = Budget(int(limit * 0.6), limit)
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    current = messages[:last_user]
    for n, extra in enumerate((messages[:0], messages[last_user:]), start=1):
        start = time.perf_counter()
        current, record = compact_conversation(current + extra, measure=measure, count_text=COUNTER.count,
                                               budget=budget, summarize=summarize, force=True, trigger="manual")
        users = sum(m["role"] == "user" for m in (messages[:last_user] if n == 1 else messages))
        yield _row(f"direct, compaction {n}", record.to_dict(), [SYSTEM, *current], facts, users,
                   (time.perf_counter() - start) * 1000)


def baseline(messages, facts, limit) -> dict:
    """Keep the most recent whole units that fit `limit`; nothing pinned, nothing summarized."""
    kept: list[dict] = []
    for unit in reversed(history_units(messages)):
        if COUNTER.count_messages([SYSTEM, *unit, *kept]) > limit:
            break
        kept = unit + kept
    return _row("baseline: drop oldest", None, [SYSTEM, *kept], facts, 4, None)


@contextlib.contextmanager
def llm_summarize() -> Iterator[tuple[Callable[[list[dict]], str], str]]:
    """(summarize, model name) for the model configured for the current directory; the
    offline local model is started for the duration."""
    from ctxagent.config.settings import LOCAL_PROVIDER, load_settings
    from ctxagent.context.compaction.model_summary import llm_summarizer
    from ctxagent.llm.client import LLMClient

    settings = load_settings(Path.cwd())
    with contextlib.ExitStack() as stack:
        model = settings.model
        if model.provider == LOCAL_PROVIDER:
            from ctxagent.llm.local.bundle import LocalServer

            model = stack.enter_context(LocalServer()).settings()
        client = LLMClient(model)
        stack.callback(client.close)
        yield llm_summarizer(client), model.model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm", action="store_true", help="summaries by the configured model")
    parser.add_argument("--window", type=int, default=12_000)
    parser.add_argument("--output", type=int, default=2_000)
    parser.add_argument("--agent-calls", type=int, default=60, help="model calls of the one-turn agent session")
    parser.add_argument("--agent-window", type=int, default=8_000)
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        summarize, label = (lambda _m: USELESS), "extractive (summarizer returns a useless fragment)"
        if args.llm:
            summarize, model = stack.enter_context(llm_summarize())
            label = f"LLM ({model}), extractive when its summary is unusable"
        run(args, summarize, label)
    if not agent_turn(args.agent_calls, args.agent_window):
        sys.exit(1)


def agent_turn(calls: int, window: int) -> bool:
    """One turn of the real loop (fake server, extractive summaries) whose facts the agent finds:
    the first line of each module it reads and a finding in every third message of its own.
    Prints the compactions and the facts in the last request; True when 3+ compactions kept all."""
    files = max(3, calls // 2)
    result = run_session(Path(tempfile.mkdtemp(prefix="found_facts_")), files=files, calls=calls, window=window)
    print(f"\none turn, facts found by the agent: {calls} model calls reading {files} modules, window {window:,}, "
          f"output 1,000; {len(result['facts'])} facts (first lines of tool results, findings in its messages)\n")
    print("| compaction | method | tokens |\n| --- | --- | --- |")
    for n, record in enumerate(result["compactions"], start=1):
        print(f"| {n} | {record['method']} | {record['tokens_before']:,} -> {record['tokens_after']:,} |")
    kept = len(result["facts"]) - len(result["missing"])
    ok = len(result["compactions"]) >= 3 and not result["missing"] and result["reason"] == "finished"
    print(f"\nfacts in the last request: {kept}/{len(result['facts'])}; compactions in the turn: "
          f"{len(result['compactions'])}; {'all facts kept' if ok else 'FAILED'}")
    for fact in result["missing"]:
        print(f"missing: {fact}")
    return ok


def run(args: argparse.Namespace, summarize: Callable[[list[dict]], str], label: str) -> None:
    messages, facts = load()
    print(f"session: {len(messages)} messages, {COUNTER.count_messages(messages):,} tokens; {len(facts)} facts; "
          f"window {args.window:,}, output {args.output:,}; summaries: {label}\n")
    print("| run | method | tokens | facts surviving | ms |\n| --- | --- | --- | --- | --- |", flush=True)
    limit = args.window - args.output
    rows = []
    for row in chain(replay(messages, facts, args.window, args.output, summarize),
                     direct(messages, facts, limit, summarize), [baseline(messages, facts, limit)]):
        print(f"| {row['run']} | {row['method']} | {row['tokens']} | {row['facts']} | {row['ms']} |", flush=True)
        rows.append(row)
    for row in rows:
        if row["missing"]:
            print(f"\n{row['run']} lost: {', '.join(row['missing'])}")


if __name__ == "__main__":
    main()
