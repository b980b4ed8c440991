"""A resumed session goes on from its automatic compaction (`CompactedView.to_record` /
`restore`, `ContextAssembler(resume=...)`, `Session.record_view`, `view_from_records`).

The property: an assembler rebuilt from the transcript's last view record sends, at the
next call, exactly what the assembler that made it would have sent, with no more summary
calls. A record that no longer matches the history is refused with a reason, and the
history is then taken as it is.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ctxagent.agent.session import Session, history_from_records, view_from_records
from ctxagent.context.assembler import ContextAssembler
from ctxagent.context.compaction.compactor import CompactionConfig
from ctxagent.context.compaction.sections import is_summary_message
from ctxagent.context.compaction.view import CompactedView, prefix_digest
from ctxagent.context.messages import is_valid_pairing, repair_pairing
from ctxagent.errors import ContextOverflowError
from ctxagent.llm.settings import ModelSettings
from ctxagent.redaction import redact
from ctxagent.storage.files import read_jsonl
from ctxagent.text.tokens import TokenCounter
from tests.context.long_history import C03_LAST, C03_TASK, add_step, call, rounds

COUNTER = TokenCounter("gpt-4o-mini")
SYSTEM = {"role": "system", "content": "You are ctxagent, a coding agent."}
TOOLS = [{"type": "function", "function": {"name": "terminal", "description": "Run a command.", "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}}}}}]
WORDS = "parse_cfg src/app.py v9-TEST loader 8443 KeyError fixed tests pass ORD-7781 timeout=30s 配置".split()


def summarizer(calls: list):
    """A model that writes a valid summary determined by its request (so two assemblers
    asked the same thing answer the same), counting its calls in `calls`."""
    def summarize(messages: list[dict], tools: list[dict] | None = None) -> str:
        calls.append(messages)
        tag = hashlib.sha1(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:10]
        return (f"## Goal\n- Rename parse_cfg to parse_config (v9-TEST)\n## Progress and decisions\n"
                f"- Read the modules so far, summary {tag}\n## Constraints and preferences\n- (none)\n"
                f"## Key facts\n- release tag v9-TEST\n## Current state\n- reading modules\n## Next steps\n- rename\n")
    return summarize


def make(window: int, calls: list, views: list | None = None, secrets=(), **kw) -> ContextAssembler:
    """An assembler with a model summarizer, aiming low enough that masking alone rarely does;
    `views` collects what `on_view` is given, as the transcript holds it (redacted JSON);
    `kw`: more ContextAssembler arguments (resume, on_notice)."""
    on_view = None
    if views is not None:
        on_view = lambda record: views.append(json.loads(json.dumps(redact({"kind": "view", **record}, secrets))))
    return ContextAssembler(ModelSettings(model="gpt-4o-mini", context_window=window, max_output_tokens=500),
                            counter=COUNTER, snapshots=False, load_state=None, summarize=summarizer(calls),
                            config=CompactionConfig(target_ratio=0.4), on_view=on_view, secrets=secrets, **kw)


def as_resumed(history: list[dict], secrets=()) -> list[dict]:
    """The history a resumed session holds: the redacted transcript, pairing repaired."""
    return [SYSTEM, *repair_pairing(json.loads(json.dumps(redact(history[1:], secrets))))]


def words(seed: int, n: int) -> str:
    return " ".join(WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(n))


step = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 80), st.integers(0, 99)),
    st.tuples(st.just("text"), st.integers(1, 150), st.integers(0, 99)),
    st.tuples(st.just("calls"), st.lists(st.integers(200, 3000), min_size=1, max_size=3), st.booleans()),
)


def turn_of(history: list[dict]) -> int:
    return sum(1 for m in history if m.get("role") == "user" and not is_summary_message(m))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(steps=st.lists(step, min_size=8, max_size=40), window=st.sampled_from([3000, 4000, 6000]),
       split=st.floats(0.5, 1.0))
def test_a_rebuilt_view_sends_what_the_live_one_would(steps, window, split):
    """Resume after the first `split` of the steps, then go on with the rest and a last
    request: every request of the resumed assembler is the live one's, summary calls too."""
    live_calls, views = [], []
    live = make(window, live_calls, views)
    history = [SYSTEM, {"role": "user", "content": C03_TASK}]
    k = max(1, int(len(steps) * split))
    try:
        for n, (kind, a, b) in enumerate(steps[:k]):
            add_step(history, n, (kind, a, b), words)
            live.assemble(history, TOOLS, {"turn": turn_of(history)})
    except ContextOverflowError:
        assume(False)
    assume(views)  # an automatic compaction happened before the resume
    resumed_history = as_resumed(history)
    resumed_calls: list = []
    notes: list[str] = []
    resumed = make(window, resumed_calls, resume=view_from_records(views), on_notice=notes.append)
    before = len(live_calls)
    rest = [*steps[k:], ("last", 0, 0)]
    for n, (kind, a, b) in enumerate(rest, start=k):
        if kind == "last":
            history.append({"role": "user", "content": C03_LAST})
            resumed_history.append({"role": "user", "content": C03_LAST})
        else:
            add_step(history, n, (kind, a, b), words)
            add_step(resumed_history, n, (kind, a, b), words)
        try:
            sent = live.assemble(history, TOOLS, {"turn": turn_of(history)})
        except ContextOverflowError:
            with pytest.raises(ContextOverflowError):
                resumed.assemble(resumed_history, TOOLS, {"turn": turn_of(history)})
            continue
        again = resumed.assemble(resumed_history, TOOLS, {"turn": turn_of(history)})
        assert again.messages == sent.messages, "the resumed request is the one the live session sends"
        assert len(resumed_calls) == len(live_calls) - before, "no summary call the live session does not make"
        assert is_valid_pairing(again.messages[1:]) and again.messages[1]["content"] == C03_TASK
    assert notes == []
    assert again.messages[-1]["content"].endswith(C03_LAST)


def _compacted(window: int = 6000, secrets=()) -> tuple[list[dict], dict, list]:
    """A C03 session compacted automatically: (history, the last view record, summary calls)."""
    calls, views = [], []
    assembler = make(window, calls, views, secrets=secrets)
    history = [SYSTEM, {"role": "user", "content": C03_TASK}]
    for i in range(20):
        history += rounds(1, start=i, chars=2000)
        assembler.assemble(history, TOOLS, {"turn": 1})
    assert views and calls
    return history, views[-1], calls


def test_the_record_names_unchanged_messages_and_carries_the_summary():
    history, record, calls = _compacted()
    assert record["kind"] == "view" and record["turn"] == 1 and record["method"] == "llm"
    entries = record["messages"]
    assert entries[0] == {"from": 0}, "the task, by reference"
    summaries = [e for e in entries if "from" not in e]
    assert len(summaries) == 1 and is_summary_message(summaries[0]["message"])
    assert "summary " in summaries[0]["message"]["content"]
    assert all(0 <= e["from"] < record["covers"] for e in entries if "from" in e)
    assert len(json.dumps(record)) < len(json.dumps(history)) / 3, "verbatim messages are not copied"


def test_a_key_shaped_string_in_a_covered_message_does_not_break_the_match():
    """The live history holds the key, the transcript (and so the resumed history) does not."""
    key = "sk-proj-" + "Z" * 24
    history = [SYSTEM, {"role": "user", "content": C03_TASK}, *rounds(20, chars=2000)]
    history[3] = {**history[3], "content": f"TOKEN = {key!r}\n" + history[3]["content"]}
    calls, views = [], []
    assembler = make(6000, calls, views, secrets=[key])
    for n in range(4, len(history) + 1, 2):
        assembler.assemble(history[:n], TOOLS, {"turn": 1})
    record = views[-1]
    assert record["covers"] > 2 and key not in json.dumps(record)
    resumed = as_resumed(history, [key])
    assert key not in json.dumps(resumed)
    view = CompactedView()
    assert view.restore(record, resumed[1:], lambda m: redact(m, [key])) is None
    assert view.base_len == record["covers"]
    live = repair_pairing(history[1:])[:record["covers"]]
    assert prefix_digest(live) != record["digest"] == prefix_digest(live, lambda m: redact(m, [key]))


@pytest.mark.parametrize("spoil, reason", [
    (lambda r, h: "nonsense", "not an object"),
    (lambda r, h: {**r, "covers": "12"}, "no valid covers"),
    (lambda r, h: {**r, "covers": len(h) + 5}, "but the history has"),
    (lambda r, h: {**r, "digest": "0" * 32}, "no longer starts with the"),
    (lambda r, h: {**r, "messages": [{"from": r["covers"]}, *r["messages"][1:]]}, "outside the"),
    (lambda r, h: {**r, "messages": [{"to": 1}, *r["messages"][1:]]}, "neither a message nor the index"),
    (lambda r, h: {**r, "messages": r["messages"][1:]}, "task's first user message"),
    (lambda r, h: {**r, "messages": [e for e in r["messages"] if h[e.get("from", 0)].get("role") != "tool"]},
     "unpaired"),
])
def test_a_record_that_does_not_match_is_refused_with_the_reason(spoil, reason):
    history, record, _ = _compacted()
    convo = as_resumed(history)[1:]
    view = CompactedView()
    why = view.restore(spoil(record, convo), convo)
    assert why is not None and reason in why
    assert view.apply(convo) == (convo, list(range(len(convo)))), "the history is taken as it is"


def test_a_refused_record_is_noted_once_and_the_history_compacted_anew():
    history, record, _ = _compacted()
    resumed_history = as_resumed(history)
    resumed_history[2] = {**resumed_history[2], "content": None, "tool_calls": [call("call_0", command="cat x.py")]}
    calls, notes = [], []
    resumed = make(6000, calls, resume=record, on_notice=notes.append)
    resumed.preview(resumed_history + [{"role": "user", "content": C03_LAST}], TOOLS, {"turn": 2})
    assert notes == [], "a preview says nothing"
    assert calls == [], "a preview compacts on a copy, as /context does, with no summary call"
    request = resumed.assemble(resumed_history + [{"role": "user", "content": C03_LAST}], TOOLS, {"turn": 2})
    assert len(notes) == 1 and "cannot be reused (the history no longer starts with the" in notes[0]
    assert request.report["compaction"] is not None and len(calls) == 1, "compacted anew"
    resumed.assemble(resumed_history + [{"role": "user", "content": C03_LAST}], TOOLS, {"turn": 2})
    assert len(notes) == 1


def test_compact_right_after_resume_merges_the_recorded_summary():
    history, record, _ = _compacted()
    calls: list = []
    resumed = make(6000, calls, resume=record)
    new = resumed.compact(as_resumed(history), trigger="manual")
    assert new[1]["content"] == C03_TASK and is_valid_pairing(new[1:])
    summary = next(m["content"] for m in new if is_summary_message(m))
    *prefix, question = calls[-1]  # the request as sent, then the question (issue 16)
    assert any(is_summary_message(m) for m in prefix), "the recorded summary is in the request"
    assert "merge it into yours" in question["content"], "and the question says to merge it"
    assert "v9-TEST" in summary


# -- the transcript side -------------------------------------------------------------------


def _event(trigger: str, turn: int = 1) -> dict:
    return {"kind": "event", "event": {"type": "compaction", "details": {"trigger": trigger, "turn_id": turn}}}


def test_view_from_records_finds_the_view_resume_goes_on_from():
    view = {"kind": "view", "covers": 3, "messages": []}
    history = {"kind": "history", "messages": []}
    message = {"kind": "message", "message": {"role": "user", "content": "x"}}
    assert view_from_records([message]) is None
    assert view_from_records([message, _event("auto"), view, message]) is view
    assert view_from_records([message, _event("auto"), view, history, message]) is None, "replaced since"
    assert view_from_records([_event("auto"), view, history, _event("manual")]) is None
    assert view_from_records([message, _event("auto", 2)]) == {
        "missing": "the transcript has no view record for the automatic compaction of turn 2: "
                   "it was written by an older ctxagent, or edited"}
    assert "missing" in view_from_records([_event("auto"), view, _event("auto", 3)]), "the later one has none"
    assert view_from_records([_event("auto"), view, _event("overflow"), message]) is view


def test_session_records_the_view_and_resume_hands_it_on(tmp_path):
    session = Session.create(tmp_path)
    session.add_message({"role": "user", "content": C03_TASK})
    session.record_view({"turn": 1, "method": "llm", "covers": 1, "digest": "d", "messages": [{"from": 0}]})
    records = read_jsonl(session.path)
    assert records[-1]["kind"] == "view" and records[-1]["covers"] == 1 and "ts" in records[-1]
    assert history_from_records(records) == session.history, "a view record is not history"
    resumed = Session.resume(tmp_path, session.id)
    assert resumed.compaction_view == records[-1] and resumed.history == session.history


def test_prefix_digest_is_order_sensitive_and_normalized():
    a, b = {"role": "user", "content": "a"}, {"role": "user", "content": "b"}
    assert prefix_digest([a, b]) != prefix_digest([b, a])
    keyed = {"role": "user", "content": "key sk-proj-" + "Y" * 24}
    assert prefix_digest([keyed], redact) == prefix_digest([redact(keyed)], redact)
