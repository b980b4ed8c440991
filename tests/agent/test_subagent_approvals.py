"""Two sub-agents that ask for approval at once (the fake server releases their first replies
together) ask one whole question at a time: when the user is asked, the preview just shown
is that child's, and the other child's preview comes only after the answer."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from ctxagent.agent.events import ApprovalRequest
from ctxagent.agent.runtime import open_agent
from ctxagent.config.settings import AgentSettings, Settings
from ctxagent.llm.settings import ModelSettings
from ctxagent.validation import Secret
from tests.support.fake_openai import text, tool_calls

BOTH = {"name": "children", "count": 2}


def _patch(name: str) -> dict:
    patch = f"*** Begin Patch\n*** Add File: {name}.txt\n+{name}\n*** End Patch\n"
    return {**tool_calls([("apply_patch", json.dumps({"patch": patch}))]), "barrier": BOTH}


def test_each_question_follows_its_own_preview(tmp_path: Path, fake_openai) -> None:
    rules = [{"contains": f"TASK-{n}", "steps": [_patch(n), text(f"## Findings\n- wrote {n}.txt\n## Not finished\n- nothing")]}
             for n in ("A", "B")]
    delegate = tool_calls([("delegate", json.dumps({"agent": "general", "task": f"TASK-{n}: write {n}.txt"}))
                           for n in ("A", "B")])
    server = fake_openai([delegate, text("Both written.")], rules=rules)
    settings = Settings(model=ModelSettings(provider="custom", model="m", base_url=server.base_url,
                                            api_key=Secret("sk-test-0123456789abcdef"), max_retries=0, timeout_s=10),
                        agent=AgentSettings(episodic_memory=False))
    previews: list[str] = []
    asked: list[list[str]] = []
    lock = threading.Lock()

    def sink(event) -> None:
        if isinstance(event, ApprovalRequest):
            with lock:
                previews.append(event.preview)

    def ask(question: str) -> str:
        time.sleep(0.3)  # room for the other child to show its preview, were it not waiting
        with lock:
            asked.append(list(previews))  # what the screen shows above the question when answered
        return "y"

    with open_agent(tmp_path, settings, sinks=[sink], ask=ask) as agent:
        end = agent.run_turn("Write both files.")
    assert end.answer == "Both written."
    assert [len(seen) for seen in asked] == [1, 2]
    assert sorted("A.txt" in p for p in previews) == [False, True] and any("B.txt" in p for p in previews)
    assert (tmp_path / "A.txt").read_text() == "A\n" and (tmp_path / "B.txt").read_text() == "B\n"
