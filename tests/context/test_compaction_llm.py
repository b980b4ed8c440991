"""The LLM summary path against the fake OpenAI server (real HTTP, real client)."""

from __future__ import annotations

import pytest

from ctxagent.context.assembler import ContextAssembler
from ctxagent.context.summarizer import llm_summarizer
from ctxagent.context.summary import SUMMARY_MARKER, is_summary_message, render_summary
from ctxagent.context.tokens import TokenCounter
from ctxagent.llm.client import LLMClient
from ctxagent.llm.settings import ModelSettings
from tests.context.long_history import C03_LAST, C03_TASK, USELESS, c03_history
from tests.support.fake_openai import error, text

SYSTEM = {"role": "system", "content": "You are ctxagent, a coding agent."}
GOOD = render_summary({
    "goal": ["Rename parse_cfg to parse_config across the repo."],
    "progress": ["Read src/mod0.py .. src/mod37.py."],
    "constraints": ["(none stated)"],
    "facts": ["[version] v9-TEST (stated by user)"],
    "state": ["Nothing patched yet."],
    "next": ["Patch the modules; update the changelog."],
})


@pytest.fixture
def assembler_for(fake_openai):
    clients: list[LLMClient] = []

    def make(*steps, window=8000, output=1000):
        server = fake_openai(list(steps))
        settings = ModelSettings(provider="custom", model="fake-model", base_url=server.base_url,
                                 api_key="sk-test-0123456789abcdef", context_window=window,
                                 max_output_tokens=output, max_retries=0)
        client = LLMClient(settings)
        clients.append(client)
        assembler = ContextAssembler(settings, summarize=llm_summarizer(client), counter=TokenCounter("gpt-4o-mini"),
                                     snapshots=False, load_state=None)
        return assembler, server

    yield make
    for client in clients:
        client.close()


def test_llm_summary_is_requested_and_used(assembler_for):
    assembler, server = assembler_for(text(GOOD))
    state = {"turn": 1, "todos": [{"content": "patch modules", "status": "in_progress"}]}
    request = assembler.assemble([SYSTEM, *c03_history()], [], state)
    record = request.report["compaction"]
    assert record["method"] == "llm" and record["summary_error"] is None
    summary = next(m["content"] for m in request.messages if is_summary_message(m))
    assert summary.startswith(SUMMARY_MARKER) and "Patch the modules" in summary
    assert request.messages[1]["content"] == C03_TASK
    assert request.messages[-1]["content"] == f"[State]\nTodo board:\n- [~] patch modules\n\n[Task]\n{C03_LAST}", \
        "the board goes in front of the latest request, which is kept verbatim"
    sent = server.requests[0]
    assert "tools" not in sent or not sent["tools"]
    prompt, transcript = sent["messages"][0]["content"], sent["messages"][1]["content"]
    assert "## Key facts" in prompt and "[~] patch modules" in prompt, "the todo board informs the summary"
    assert 'Tool result of terminal "cat src/mod0.py"' in transcript


@pytest.mark.parametrize("reply", [text(USELESS), text(""), error(500, "boom"), error(400, "bad request")])
def test_useless_or_failed_llm_summary_falls_back(assembler_for, reply):
    assembler, _ = assembler_for(reply)
    request = assembler.assemble([SYSTEM, *c03_history()], [], {"turn": 1})
    record = request.report["compaction"]
    assert record["method"] == "extractive" and record["summary_error"]
    assert request.messages[1]["content"] == C03_TASK and request.messages[-1]["content"] == C03_LAST


def test_C03_two_llm_compactions_carry_the_first_summary(assembler_for):
    assembler, server = assembler_for(text(GOOD), text(USELESS))
    history = [SYSTEM, *c03_history()]
    assembler.assemble(history, [], {"turn": 1})
    history = assembler.compact(history + [{"role": "user", "content": "Then run the tests."}], trigger="manual")
    transcript = server.requests[1]["messages"][1]["content"]
    assert "### Earlier summary" in transcript and "Patch the modules" in transcript
    summary = next(m["content"] for m in history if is_summary_message(m))
    assert assembler.last_record.method == "extractive"
    assert "v9-TEST" in summary and "Patch the modules; update the changelog." in summary
    assert history[1]["content"] == C03_TASK and history[-1]["content"] == "Then run the tests."
