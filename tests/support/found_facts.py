"""A one-turn session whose facts the agent finds itself (issue 16), for the real loop and the fake server.

`write_modules` writes the modules it reads; `session` gives the fake server's steps and the
facts: the first line of each module (a tool result) and the agent's findings (its own
messages). `run_session` runs it through `open_agent` and returns what the checks need.
Used by `benchmarks/compaction_facts.py` and tests/context/test_found_facts.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxagent.validation import Secret
from tests.support.fake_openai import FakeOpenAI, text, tool_calls

#: The fake model's reply to a summary request: no summary, so compaction uses the extractive one.
USELESS = '[assistant calls read_file] {"path":"a.py"}'
TASK = "Audit the modules under src/ one by one and report which owner and limit each one declares."
_OWNERS = ("kestrel", "heron", "marten", "plover", "osprey", "vole", "lynx", "wren", "tern", "stoat")


def write_modules(root: Path, files: int) -> None:
    """src/mod00.py... : a first line with the module's owner and limit, then ~2,000 characters of code."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    for i in range(files):
        head = f"# mod{i:02d}: owner team-{_OWNERS[i % len(_OWNERS)]}-{i:02d}, limit {100 + 37 * i} ms\n"
        body = "".join(f"def step_{i}_{j}(value):\n    return value * {j} + {i}\n\n" for j in range(40))
        (root / "src" / f"mod{i:02d}.py").write_text(head + body, encoding="utf-8")


def session(files: int, calls: int) -> tuple[list[dict], list[str]]:
    """(fake server steps, facts): `calls` reads of the modules in turn, every third call with a
    finding in the assistant's text, then a final answer. Facts: each module's first line and
    each finding."""
    steps, facts = [], []
    for k in range(calls):
        i = k % files
        content = None
        if k % 3 == 2:
            finding = f"Finding F{k:03d}: src/mod{(i - 1) % files:02d}.py is the {k}th module checked"
            facts.append(finding)
            content = finding + "."
        call = {"name": "terminal", "arguments": json.dumps({"command": f"cat src/mod{i:02d}.py"}), "id": f"call_{k}"}
        steps.append(tool_calls([call], content=content))
    facts += [f"owner team-{_OWNERS[i % len(_OWNERS)]}-{i:02d}, limit {100 + 37 * i} ms" for i in range(min(files, calls))]
    return [*steps, text("All modules audited.")], facts


def run_session(root: Path, *, files: int, calls: int, window: int, output: int = 1000) -> dict[str, Any]:
    """Run the session in `root` (a git repository or a plain folder) through the real loop.
    Returns {"requests": the main requests the server got ("every_request": summary requests
    too, in order), "compactions": the compaction
    events' details, "facts", "missing": the facts not in the last request}."""
    from ctxagent.agent.runtime import open_agent
    from ctxagent.config.settings import AgentSettings, Settings
    from ctxagent.llm.settings import ModelSettings

    write_modules(root, files)
    steps, facts = session(files, calls)
    events: list = []
    with FakeOpenAI(steps, rules=[{"contains": "You are compacting", "step": text(USELESS)}]) as server:
        settings = Settings(model=ModelSettings(provider="custom", model="gpt-4o-mini", base_url=server.base_url,
                                                api_key=Secret("sk-facts-0123456789abcdef"), max_retries=0,
                                                timeout_s=30, context_window=window, max_output_tokens=output),
                            agent=AgentSettings(tools=["terminal"], episodic_memory=False, max_steps=calls + 5))
        with open_agent(root, settings, sinks=[events.append]) as agent:
            end = agent.run_turn(TASK)
        every = list(server.requests)
    requests = [r for r in every if "You are compacting" not in json.dumps(r["messages"])]
    last = json.dumps(requests[-1]["messages"], ensure_ascii=False)
    return {"reason": end.reason, "requests": requests, "every_request": every, "facts": facts,
            "compactions": [e.details for e in events if e.type == "compaction"],
            "missing": [f for f in facts if json.dumps(f, ensure_ascii=False)[1:-1] not in last]}
