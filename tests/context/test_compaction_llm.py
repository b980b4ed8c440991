"""The LLM summary path against the fake OpenAI server (real HTTP, real client)."""

from __future__ import annotations

import json

import pytest

from ctxagent.context.assembler import ContextAssembler, request_params_of
from ctxagent.context.compaction.model_summary import llm_summarizer
from ctxagent.context.compaction.sections import SUMMARY_MARKER, is_summary_message, render_summary
from ctxagent.context.record.recorder import SnapshotRecorder
from ctxagent.context.record.snapshot import read_snapshot, scrub
from ctxagent.errors import ContextOverflowError
from ctxagent.llm.client import LLMClient
from ctxagent.llm.settings import ModelSettings
from ctxagent.storage.files import state_dir
from ctxagent.text.tokens import TokenCounter
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
    assert request.messages[-1]["content"] == f"{C03_LAST}\n\n[State]\nTodo board:\n- [~] patch modules", \
        "the board goes after the latest request, which is kept verbatim"
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
    *prefix, question = server.requests[1]["messages"]  # the request as sent, then the question (issue 16)
    earlier = [m["content"] for m in prefix if is_summary_message(m)]
    assert len(earlier) == 1 and "Patch the modules" in earlier[0]
    assert question["role"] == "user" and "merge it into yours" in question["content"]
    summary = next(m["content"] for m in history if is_summary_message(m))
    assert assembler.last_record.method == "extractive"
    assert "v9-TEST" in summary and "Patch the modules; update the changelog." in summary
    assert history[1]["content"] == C03_TASK and history[-1]["content"] == "Then run the tests."


# -- snapshots: the request parameters as sent, and the summary call made for a call ---------------

SECRET = "sk-test-0123456789abcdef"
SESSION = "20260101-000000-abcd"


@pytest.fixture
def recording(fake_openai, tmp_path):
    """(assembler writing snapshots under tmp_path, its client, the fake server) for `steps`."""
    clients: list[LLMClient] = []

    def make(*steps, session=None):
        server = fake_openai(list(steps))
        settings = ModelSettings(provider="custom", model="fake-model", base_url=server.base_url, api_key=SECRET,
                                 context_window=8000, max_output_tokens=1000, max_retries=0, temperature=0.3,
                                 max_tokens_field="max_completion_tokens")
        client = LLMClient(settings)
        clients.append(client)
        counter = TokenCounter("gpt-4o-mini")
        recorder = SnapshotRecorder(settings.model, counter=counter, secrets=[SECRET], session=session,
                                    request_params=request_params_of(client))
        assembler = ContextAssembler(settings, summarize=llm_summarizer(client), counter=counter,
                                     load_state=None, secrets=[SECRET], recorder=recorder)
        return assembler, client, server

    yield make
    for client in clients:
        client.close()


def _snapshot(tmp_path, n):
    return read_snapshot(state_dir(tmp_path), SESSION, n)


def test_the_snapshot_holds_the_parameters_and_the_summary_call_as_sent(recording, tmp_path):
    assembler, client, server = recording(text(GOOD), text("done"))
    history = [SYSTEM, *c03_history()]
    history[1] = {"role": "user", "content": f"{C03_TASK} My key is {SECRET}."}
    request = assembler.assemble(history, [], {"turn": 1, "session_id": SESSION, "repo": str(tmp_path)})
    client.chat(request.messages, None)  # as the loop sends it
    sent_summary, sent_call = server.requests
    snap = _snapshot(tmp_path, 1)
    assert snap["request"]["tools"] == [] and "tools" not in sent_call
    assert {k: v for k, v in snap["request"].items() if k != "tools"} == scrub(sent_call, [SECRET])
    assert snap["request"]["max_completion_tokens"] == 1000 and snap["request"]["temperature"] == 0.3
    assert snap["request"]["stream"] is True and snap["request"]["stream_options"] == {"include_usage": True}
    [summary] = snap["summary_calls"]
    assert summary["trigger"] == "auto" and summary["request"] == scrub(sent_summary, [SECRET])
    assert summary["tokens"] > 0 and "error" not in summary
    assert snap["report"]["compaction"]["method"] == "llm"
    assert snap["redacted"] is True and SECRET not in json.dumps(snap)


def test_a_summary_made_between_calls_is_a_snapshot_of_its_own(recording, tmp_path):
    assembler, _, server = recording(error(500, "boom"))
    state = {"turn": 1, "step": 1, "session_id": SESSION, "repo": str(tmp_path)}
    history = [SYSTEM, {"role": "user", "content": "hi"}]
    assembler.assemble(history, [], state)
    assert "summary_calls" not in _snapshot(tmp_path, 1)
    history = assembler.compact([SYSTEM, *c03_history()], trigger="manual")  # /compact; its summary call fails
    summary = _snapshot(tmp_path, 2)  # written when the call ended: no later call is needed
    assert summary["kind"] == "summary" and "report" not in summary and "summary_calls" not in summary
    assert summary["made_for"] == {"call": 1, "turn": 1, "step": 1, "trigger": "manual"}
    assert "500" in summary["error"] and summary["usage"] is None and summary["tokens"] > 0
    assert summary["request"]["messages"] == scrub(server.requests[0]["messages"], [SECRET])
    assert summary["request"]["max_completion_tokens"] == 1000 and summary["request"]["temperature"] == 0.3
    assembler.assemble(history, [], {**state, "turn": 2})
    assert _snapshot(tmp_path, 3).get("kind") is None and "summary_calls" not in _snapshot(tmp_path, 3)


def test_a_compact_before_any_call_writes_where_the_session_state_says(recording, tmp_path):
    """A resumed chat's `/compact` before its first call: the recorder's `session` names the
    session, and the summary call numbers after the snapshots already on disk."""
    assembler, _, server = recording(text(GOOD), session={"session_id": SESSION, "repo": str(tmp_path)})
    folder = state_dir(tmp_path) / "snapshots" / SESSION
    folder.mkdir(parents=True)
    (folder / "4.json").write_text(json.dumps({"version": 1, "call": 4, "request": {}, "report": {}}), encoding="utf-8")
    assembler.compact([SYSTEM, *c03_history()], "the parser", trigger="manual")
    summary = _snapshot(tmp_path, 5)
    assert summary["made_for"] == {"call": None, "turn": None, "step": None, "trigger": "manual", "focus": "the parser"}
    assert "error" not in summary and summary["request"]["messages"] == scrub(server.requests[0]["messages"], [SECRET])


def test_without_a_session_the_summary_goes_with_the_next_call(recording, tmp_path):
    """No main call yet and no recorder `session` (the library on its own): nowhere to write,
    so the summary call waits for the next call's snapshot, as before."""
    assembler, _, _ = recording(text(GOOD))
    history = assembler.compact([SYSTEM, *c03_history()], trigger="overflow")
    assembler.assemble(history, [], {"turn": 1, "session_id": SESSION, "repo": str(tmp_path)})
    snap = _snapshot(tmp_path, 1)
    assert snap.get("kind") is None and [c["trigger"] for c in snap["summary_calls"]] == ["overflow"]


def test_an_automatic_summary_whose_request_cannot_be_built_is_written(recording, tmp_path):
    """The summary call of an automatic compaction belongs in the request it builds; when
    that request cannot fit after all (ContextOverflowError), it is a snapshot of its own."""
    assembler, _, server = recording(text(GOOD))
    state = {"turn": 1, "step": 1, "session_id": SESSION, "repo": str(tmp_path)}
    tools = [{"type": "function", "function": {"name": "big", "description": "x " * 9000, "parameters": {}}}]
    with pytest.raises(ContextOverflowError):
        assembler.assemble([SYSTEM, *c03_history()], tools, state)
    assert len(server.requests) == 1, "the compaction asked for a summary before the request was found too big"
    summary = _snapshot(tmp_path, 1)
    assert summary["kind"] == "summary" and summary["made_for"]["trigger"] == "auto"
    assert summary["made_for"]["unsent"].startswith("ContextOverflowError")
    assert summary["made_for"]["call"] is None and summary["made_for"]["turn"] == 1
    assert assembler.recorder.pending == []


def test_a_preview_makes_no_summary_call_and_says_its_summary_is_a_stand_in(recording, tmp_path):
    assembler, _, server = recording(text(GOOD), text(GOOD))
    state = {"turn": 1, "session_id": SESSION, "repo": str(tmp_path)}
    report = assembler.preview([SYSTEM, *c03_history()], [], state).report  # /context in chat
    assert server.requests == [], "a preview calls no model"
    assert not (tmp_path / ".ctxagent").exists(), "and writes nothing"
    compaction = report["compaction"]
    assert compaction["method"] == "extractive" and compaction["summary_error"] is None
    assert compaction["stand_in"]["tokens"] > 0 and "stand-in" in compaction["stand_in"]["note"]
    [row] = [r for r in report["packets"] if r["type"] == "summary"]
    assert "stand-in" in row["reason"]
    request = assembler.assemble([SYSTEM, *c03_history()], [], state)  # the real call: as before
    assert len(server.requests) == 1 and request.report["compaction"]["method"] == "llm"
    assert "stand_in" not in request.report["compaction"]
    [summary_call] = _snapshot(tmp_path, 1)["summary_calls"]
    assert summary_call["tokens"] == compaction["stand_in"]["tokens"], "the preview named the request it did not send"



@pytest.mark.parametrize("takes_tools", [False, True])
def test_a_textbook_one_argument_summarizer_gets_the_transcript_request(takes_tools):
    """`summarize(messages) -> str` (the textbook's convention) cannot take `tools=`: it is sent the
    transcript request, not the conversation's own prefix, and its summary is used."""
    from ctxagent.context.compaction.compactor import Budget, Prefix, compact_conversation

    asked: list[tuple[list[dict], object]] = []

    def one_argument(messages):
        asked.append((messages, None))
        return GOOD

    def with_schemas(messages, tools=None):
        asked.append((messages, tools))
        return GOOD

    counter = TokenCounter("gpt-4o-mini")
    tools = [{"type": "function", "function": {"name": "terminal", "description": "Run a command.",
                                               "parameters": {"type": "object", "properties": {}}}}]
    _, record = compact_conversation(c03_history(), measure=counter.count_messages, count_text=counter.count,
                                     budget=Budget(target=8_000, limit=36_000), force=True,
                                     summarize=with_schemas if takes_tools else one_argument,
                                     prefix=Prefix(lambda convo: [SYSTEM, *convo], tools, one_break=True))
    assert record.method == "llm" and record.summary_error is None
    [(messages, sent_tools)] = asked
    assert (messages[0] == SYSTEM) is takes_tools and (sent_tools == tools) is takes_tools
