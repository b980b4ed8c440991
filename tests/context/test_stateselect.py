"""`ctxagent.context.state.select`: the todo board as state, notes as evidence and memory
hits as memory packets, each scored and selected under its layer's budget (issue 3's
wiring, issue 4's per-packet decisions)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxagent.context.assembler import ContextAssembler
from ctxagent.context.compaction.sections import is_summary_message
from ctxagent.context.fitting import build_request
from ctxagent.context.packet import ContextConfig
from ctxagent.context.state.select import rows, scoring_query, select_state, selection_config
from ctxagent.errors import ConfigError, ContextOverflowError
from ctxagent.llm.settings import ModelSettings
from ctxagent.text.tokens import TokenCounter
from tests.context.long_history import call

COUNTER = TokenCounter("gpt-4o-mini")
NOW = 1_700_000_000.0
QUERY = "How do we deploy the release?"
FILLER = ("gardening tomatoes basil watering compost", "chess openings sicilian defence", "sourdough starter hydration",
          "birdwatching herons estuary", "watercolour paper weights", "marathon tapering schedule")


def notes_30() -> list[dict]:
    """27 notes about other things, 3 about deploying the release."""
    notes = [{"id": f"n{i:02d}", "title": f"aside {i}", "type": "general", "created_at": NOW - 9000 + i,
              "content": f"Musing {i}: {FILLER[i % len(FILLER)]}."} for i in range(27)]
    notes += [
        {"id": "r1", "title": "deploy", "type": "conclusion", "created_at": NOW - 50,
         "content": "We deploy the release with uv build and twine upload."},
        {"id": "r2", "title": "release tag", "type": "reference", "created_at": NOW - 40,
         "content": "The release tag is v9-TEST; deploy after tagging."},
        {"id": "r3", "title": "deploy blocker", "type": "action", "created_at": NOW - 30,
         "content": "Release deploy needs the PyPI token from the vault."},
    ]
    return notes


def choose(state: dict, query: str = QUERY, limit: int = 7000, config: ContextConfig | None = None):
    return select_state(state, query, limit=limit, counter=COUNTER, config=config or ContextConfig(), now=NOW)


def by_id(selection) -> dict[str, dict]:
    return {r["id"]: r for r in rows(selection)}


def test_the_3_relevant_notes_of_30_are_selected_and_the_others_dropped_with_reason():
    selection = choose({"notes": notes_30()})
    table = by_id(selection)
    assert {i for i, r in table.items() if r["decision"] == "selected"} == {"note:r1", "note:r2", "note:r3"}
    for i in ("note:r1", "note:r2", "note:r3"):
        assert table[i]["layer"] == "evidence" and table[i]["relevance"] > 0 and table[i]["reason"] == "fits its layer budget"
    aside = table["note:n07"]
    assert (aside["decision"], aside["relevance"]) == ("dropped", 0.0)
    assert aside["reason"] == "relevance 0.00 below min_relevance 0.1"
    assert aside["title"] == "aside 7" and aside["note_type"] == "general" and 0 < aside["recency"] < 1
    [(name, text)] = selection.parts
    assert name == "notes" and text.index("id r1") < text.index("id r2") < text.index("id r3"), "creation order"
    assert "Musing" not in text


def test_task_state_and_blocker_notes_are_pinned_newest_only():
    notes = notes_30() + [
        {"id": "t-old", "title": "old state", "type": "task_state", "created_at": NOW - 500, "content": "Step 1 done."},
        {"id": "t-new", "title": "state", "type": "task_state", "created_at": NOW - 5, "content": "Step 2 of 4 done."},
        {"id": "b1", "title": "blocked", "type": "blocker", "created_at": NOW - 6, "content": "CI runner is offline."},
    ]
    table = by_id(choose({"notes": notes}))
    assert table["note:t-new"]["decision"] == "selected" and table["note:t-new"]["pinned"]
    assert table["note:t-new"]["reason"] == "pinned: the newest task_state note"
    assert table["note:b1"]["reason"] == "pinned: the newest blocker note"
    assert table["note:t-old"]["decision"] == "dropped" and "below min_relevance" in table["note:t-old"]["reason"]


def test_a_pinned_note_too_long_for_the_layer_is_cut_to_fit():
    notes = [{"id": "t", "title": "state", "type": "task_state", "content": "progress line. " * 2000}]
    selection = choose({"notes": notes}, limit=2000)
    [row] = rows(selection)
    assert row["decision"] == "truncated" and row["reason"] == "pinned: the newest task_state note, cut to fit"
    assert selection.used["evidence"] <= selection.budgets["evidence"]


def test_memory_importance_is_folded_into_the_score_but_not_the_relevance():
    hits = [{"id": "hi", "content": "We deploy the release with uv.", "importance": 1.0, "memory_type": "semantic"},
            {"id": "lo", "content": "We deploy the release with uv!", "importance": 0.0, "memory_type": "episodic"}]
    table = by_id(choose({"memory": hits}, config=ContextConfig(dedup_threshold=1.0)))
    hi, lo = table["memory:hi"], table["memory:lo"]
    assert hi["layer"] == lo["layer"] == "memory" and hi["relevance"] == lo["relevance"] == 1.0
    plain = 0.7 * 1.0 + 0.3 * 1.0  # no timestamps: recency 1
    assert hi["score"] == pytest.approx(plain, abs=1e-3) and lo["score"] == pytest.approx(plain * 0.8 / 1.2, abs=1e-3)
    assert (hi["importance"], lo["importance"]) == (1.0, 0.0) and hi["title"] == "semantic"


def test_a_memory_that_repeats_a_selected_note_is_dropped_as_a_duplicate():
    text = "We deploy the release with uv build and twine upload."
    state = {"notes": [{"id": "r1", "title": "deploy", "content": text}],
             "memory": [{"id": "m1", "content": text, "importance": 0.9}]}
    table = by_id(choose(state))
    assert table["note:r1"]["decision"] == "selected"
    assert table["memory:m1"]["decision"] == "dropped" and table["memory:m1"]["reason"].startswith("near-duplicate of note:r1")


def test_near_duplicate_notes_take_space_once():
    text = ("The release tag is v9-TEST and we deploy after tagging the release. The changelog lists every "
            "fix since v8, and the deploy script reads the PyPI token from the vault before it uploads.")
    table = by_id(choose({"notes": [{"id": "a", "content": text}, {"id": "b", "content": text + " "}]}))
    decisions = sorted(r["decision"] for r in table.values())
    assert decisions == ["dropped", "selected"]
    assert any(r["reason"].startswith("near-duplicate of note:") for r in table.values())


def test_the_todo_board_is_the_state_layer():
    todos = [{"content": "update the changelog", "status": "in_progress"}, {"content": "tag", "status": "pending"}]
    selection = choose({"todos": todos, "notes": notes_30()})
    parts = dict(selection.parts)
    assert parts["todos"] == "Todo board:\n- [~] update the changelog\n- [ ] tag"
    assert selection.used["state"] == selection.budgets["state"] == COUNTER.count(parts["todos"])
    messages = build_request([{"role": "system", "content": "sys"}], selection.parts,
                             [{"role": "user", "content": QUERY}])
    assert messages[0] == {"role": "system", "content": "sys"}
    assert messages[1]["content"].startswith(f"{QUERY}\n\n[State]\nTodo board:\n- [~] update the changelog")
    assert "\n\n[Evidence]\nNote (deploy, conclusion, id r1)" in messages[1]["content"]


def test_the_block_goes_last_after_the_newest_message_not_into_a_summary_and_not_the_system():
    parts = [("memory_files", "## Project memory\nPrefer small patches."), ("todos", "Todo board:\n- [ ] tag")]
    convo = [{"role": "user", "content": "task"}, {"role": "assistant", "content": "ok"},
             {"role": "user", "content": "now this"}, {"role": "assistant", "content": None, "tool_calls": []},
             {"role": "user", "content": "[Context summary: earlier messages of this session were compacted]\n## Goal"}]
    messages = build_request([{"role": "system", "content": "sys"}], parts, convo)
    assert "Prefer small patches." in messages[0]["content"] and "tag" not in messages[0]["content"]
    assert messages[1:6] == convo, "the conversation is sent as it is"
    assert messages[6:] == [{"role": "assistant", "content": "Ok."}, {"role": "user", "content": "[State]\nTodo board:\n- [ ] tag"}]
    after_tool = build_request([], parts[1:], [*convo[:3], {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": "out"}])
    assert after_tool[-1] == {"role": "user", "content": "[State]\nTodo board:\n- [ ] tag"} and after_tool[2] == convo[2]
    multimodal = build_request([], parts[1:], [{"role": "user", "content": [{"type": "text", "text": "look"}]}])
    assert multimodal[0]["content"][0]["text"] == "look" and multimodal[0]["content"][1]["text"].startswith("[State]")
    no_user = build_request([{"role": "system", "content": "sys"}], parts[1:], [])
    assert no_user == [{"role": "system", "content": "sys"}, {"role": "user", "content": "[State]\nTodo board:\n- [ ] tag"}]


def test_the_rendering_is_byte_stable_while_the_selection_holds():
    state = {"notes": notes_30(), "todos": [{"content": "tag", "status": "pending"}]}
    first = select_state(state, QUERY, limit=7000, counter=COUNTER, config=ContextConfig(), now=NOW)
    later = select_state(state, QUERY, limit=7000, counter=COUNTER, config=ContextConfig(), now=NOW + 1800)
    assert first.parts == later.parts
    assert [r["score"] for r in rows(first)] != [r["score"] for r in rows(later)], "recency moved, the bytes did not"


def test_the_scoring_query_is_the_current_request_and_the_task():
    convo = [{"role": "user", "content": "Rename parse_cfg everywhere."}, {"role": "assistant", "content": "ok"},
             {"role": "user", "content": "[Context summary: earlier messages of this session were compacted]\nx"},
             {"role": "user", "content": "Now update the changelog."}]
    assert scoring_query({"task": "Now update the changelog."}, convo) == \
        "Now update the changelog.\nRename parse_cfg everywhere."
    assert scoring_query({"task": "hi"}, []) == "hi"


def test_a_code_question_gives_evidence_more_budget():
    plain = choose({}, query="tell me a story")
    code = choose({}, query="why does parse_cfg raise KeyError?")
    assert code.query_type == "code" and code.budgets["evidence"] > plain.budgets["evidence"]


def test_settings_shape_the_selection_and_bad_values_name_the_key():
    class Context:
        min_relevance = 0.9
        compaction_trigger_ratio = 0.8  # someone else's key: ignored here

    assert selection_config(Context()).min_relevance == 0.9
    Context.min_relevance = 3
    with pytest.raises(ConfigError, match="min_relevance") as info:
        selection_config(Context())
    assert info.value.setting == "context.min_relevance"


def test_when_the_request_does_not_fit_memory_goes_first_and_the_rows_say_so():
    state = {"turn": 1, "todos": [{"content": "tag", "status": "pending"}],
             "notes": [{"id": "r1", "title": "deploy", "content": "We deploy the release with uv. " * 30}],
             "memory": [{"id": "m1", "content": "Deploy the release on Fridays only. " * 30, "importance": 0.9}]}
    history = [{"role": "system", "content": "sys"}, {"role": "user", "content": QUERY + " " + "please " * 1100}]
    assembler = ContextAssembler(ModelSettings(model="gpt-4o-mini", context_window=2000, max_output_tokens=500),
                                 counter=COUNTER, snapshots=False, load_state=None)
    request = assembler.assemble(history, [], state)
    table = {r["id"]: r for r in request.report["packets"]}
    assert table["memory:m1"]["decision"] == "dropped"
    assert table["memory:m1"]["reason"] == "trimmed: did not fit the input budget: the memory layer was left out"
    assert "left out the memory layer" in request.report["fit_actions"]
    assert request.report["layers"]["memory"]["used"] == 0
    assert COUNTER.count_messages(request.messages) <= assembler.budget()["limit"]


# -- property: every layer stays within its budget, every packet has a decision and a reason --------------

WORDS = ("deploy release uv twine tag v9-TEST parse_cfg config loader port 8443 changelog 日志 配置 "
         "garden chess sourdough heron marathon").split()
note_st = st.tuples(st.integers(0, 400), st.integers(0, 99), st.sampled_from(["general", "task_state", "blocker"]))
hit_st = st.tuples(st.integers(0, 300), st.integers(0, 99), st.floats(0, 1))


def _text(n: int, seed: int) -> str:
    return " ".join(WORDS[(seed * 7 + i * 3) % len(WORDS)] + ("" if i % 5 else f" w{seed}x{i}") for i in range(n))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(notes=st.lists(note_st, max_size=25), hits=st.lists(hit_st, max_size=6),
       limit=st.integers(0, 6000), query_words=st.integers(1, 12))
def test_layer_budgets_hold(notes, hits, limit, query_words):
    state = {"notes": [{"id": f"n{i}", "title": f"t{i}", "type": kind, "content": _text(n, seed) or "x",
                        "created_at": NOW - i} for i, (n, seed, kind) in enumerate(notes)],
             "memory": [{"id": f"m{i}", "content": _text(n, seed) or "y", "importance": imp}
                        for i, (n, seed, imp) in enumerate(hits)]}
    selection = choose(state, query=_text(query_words, 3), limit=limit)
    for layer in ("evidence", "memory"):
        assert selection.used[layer] <= selection.budgets[layer], layer
    table = rows(selection)
    assert len(table) == len(notes) + len(hits)
    for row in table:
        assert row["decision"] in ("selected", "truncated", "dropped") and row["reason"]
        assert 0.0 <= row["relevance"] <= 1.0 and 0.0 <= row["recency"] <= 1.0 and 0.0 <= row["score"] <= 1.0
    rendered = dict(selection.parts)
    for name, layer in (("notes", "evidence"), ("memory", "memory")):
        live = [r for r in table if r["layer"] == layer and r["decision"] != "dropped"]
        assert (name in rendered) == bool(live)
        if live:
            assert COUNTER.count(rendered[name]) <= selection.used[layer]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(notes=st.lists(note_st, max_size=12), todos=st.integers(0, 30), request_words=st.integers(1, 400),
       reads=st.lists(st.integers(0, 4000), max_size=6), window=st.sampled_from([1500, 4000, 12000]))
def test_assembled_requests_with_state_fit_and_keep_the_request(notes, todos, request_words, reads, window):
    """With notes and a board in play, a request fits the input budget (or the irreducible
    part does not fit and ContextOverflowError says so), ends with the request verbatim,
    and every layer stays within its budget."""

    state = {"turn": 1, "todos": [{"content": f"step {i} " + _text(3, i), "status": "pending"} for i in range(todos)],
             "notes": [{"id": f"n{i}", "title": f"t{i}", "type": kind, "content": _text(n, seed) or "x"}
                       for i, (n, seed, kind) in enumerate(notes)]}
    request_text = _text(request_words, 5)
    history = [{"role": "system", "content": "sys"}, {"role": "user", "content": request_text}]
    for i, size in enumerate(reads):
        history += [{"role": "assistant", "content": None, "tool_calls": [call(f"c{i}", command=f"cat f{i}")]},
                    {"role": "tool", "tool_call_id": f"c{i}", "content": _text(size // 5, i)}]
    assembler = ContextAssembler(ModelSettings(model="gpt-4o-mini", context_window=window, max_output_tokens=300),
                                 counter=COUNTER, snapshots=False, load_state=None)
    try:
        request = assembler.assemble(history, [], state)
    except ContextOverflowError:
        assert COUNTER.count_messages(history[:2]) > assembler.budget()["limit"] * 0.5
        return
    assert COUNTER.count_messages(request.messages) <= assembler.budget()["limit"]
    users = [m for m in request.messages if m["role"] == "user" and not is_summary_message(m)]
    assert users[0]["content"].startswith(request_text), "the request is kept, the state after it"
    assert len(users) == 1 or users[1]["content"].startswith(("[State]", "[Evidence]"))
    for name, layer in request.report["layers"].items():
        if name in ("evidence", "memory"):
            assert layer["used"] <= layer["budget"], name
