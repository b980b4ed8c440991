"""ContextAssembler: budget, compaction as often as needed, state re-injection, overflow (C01, C05, C06)."""

from __future__ import annotations

import json

import pytest

from ctxagent.context.assembler import ContextAssembler
from ctxagent.context.compaction.compactor import CompactionConfig
from ctxagent.context.compaction.sections import is_summary_message
from ctxagent.context.fitting import alternate
from ctxagent.context.messages import is_valid_pairing
from ctxagent.context.state.read import gather_state
from ctxagent.errors import ContextOverflowError
from ctxagent.llm.settings import ModelSettings
from ctxagent.text.tokens import TokenCounter
from tests.context.long_history import C03_TASK, call, rounds, tool_pairing_ok

COUNTER = TokenCounter("gpt-4o-mini")
SYSTEM = {"role": "system", "content": "You are ctxagent, a coding agent."}
TOOLS = [{"type": "function", "function": {"name": "terminal", "description": "Run a read-only command.",
                                           "parameters": {"type": "object",
                                                          "properties": {"command": {"type": "string"}}}}}]


def make(window=8000, output=1000, **kw) -> ContextAssembler:
    kw.setdefault("snapshots", False)
    kw.setdefault("load_state", None)
    return ContextAssembler(ModelSettings(model="gpt-4o-mini", context_window=window, max_output_tokens=output),
                            counter=COUNTER, **kw)


def sent_tokens(request) -> int:
    return COUNTER.count_messages(request.messages, TOOLS)


def test_a_request_that_fits_comes_back_unchanged():
    history = [SYSTEM, {"role": "user", "content": "hi"}, *rounds(2, chars=300)]
    request = make().assemble(history, TOOLS, {"turn": 1})
    assert request.messages == history
    assert request.report["compaction"] is None and request.report["fit_actions"] == []
    assert {p["decision"] for p in request.report["packets"]} == {"selected"}


def test_C05_one_tool_result_bigger_than_the_window():
    history = [SYSTEM, {"role": "user", "content": "Show me the log."},
               {"role": "assistant", "content": None, "tool_calls": [call("big", command="cat app.log")]},
               {"role": "tool", "tool_call_id": "big", "content": "log line 42: all good\n" * 9091}]
    assert len(history[-1]["content"]) > 200_000
    assembler = make(window=8000, output=1000)
    request = assembler.assemble(history, TOOLS, {"turn": 1})
    assert sent_tokens(request) <= assembler.budget()["limit"]
    assert is_valid_pairing(request.messages[1:])
    result = request.messages[-1]["content"]
    assert "characters truncated ...]" in result and result.startswith("log line 42")
    assert history[-1]["content"].endswith(result.rsplit("\n", 1)[-1]), "the tail is kept"
    last = request.report["packets"][-1]
    assert last["decision"] == "truncated" and last["reason"].startswith("cut:") and last["id"] == "msg3"


@pytest.mark.parametrize("content", [
    "日志行：一切正常。\n" * 20_000,  # CJK counts ~1-2 tokens a character
    json.dumps({"status": "ok", "rows": ["row %d" % i for i in range(30_000)], "note": "end"}),
])
def test_C05_neighbours_cjk_and_json_results(content):
    history = [SYSTEM, {"role": "user", "content": "go"},
               {"role": "assistant", "content": None, "tool_calls": [call("c", command="cat data")]},
               {"role": "tool", "tool_call_id": "c", "content": content}]
    assembler = make(window=8000, output=1000)
    request = assembler.assemble(history, TOOLS, {"turn": 1})
    assert sent_tokens(request) <= assembler.budget()["limit"]
    if content.startswith("{"):
        assert set(json.loads(request.messages[-1]["content"])) == {"status", "rows", "note"}


def test_C01_oldest_first_trimming_keeps_calls_with_results():
    listing = "".join(f"src/module_{i}.py\n" for i in range(400))[:4000]
    history = [SYSTEM, {"role": "user", "content": "List the repo."},
               {"role": "assistant", "content": None, "tool_calls": [call("call_1", command="ls")]},
               {"role": "tool", "tool_call_id": "call_1", "content": listing},
               {"role": "assistant", "content": "There are 3 files."},
               {"role": "user", "content": "Now read main.py"}]
    shapes = set()
    for window in range(400, 2400, 100):
        config = CompactionConfig(keep_tool_results=1, tool_result_ratio=1.0)
        assembler = make(window=window, output=200, config=config)
        request = assembler.assemble(history, TOOLS, {"turn": 2})
        assert tool_pairing_ok(request.messages), window
        assert sent_tokens(request) <= assembler.budget()["limit"]
        assert request.messages[1] == history[1] and request.messages[-1] == history[-1]
        shapes.add(tuple(m["role"] for m in request.messages))
    assert any("tool" not in shape and "assistant" in shape for shape in shapes), "the call unit went whole"
    assert tuple(m["role"] for m in history) in shapes, "and kept whole at another"


def _long_turn(n, **kw):
    return [SYSTEM, {"role": "user", "content": C03_TASK}, *rounds(n, **kw)]


def _shared_prefix(a: list[dict], b: list[dict]) -> int:
    """How many leading messages two requests share byte for byte (as JSON)."""
    n = 0
    while n < min(len(a), len(b)) and json.dumps(a[n]) == json.dumps(b[n]):
        n += 1
    return n


def test_compaction_runs_as_often_as_one_long_turn_needs_and_requests_change_only_at_their_end():
    """Issue 16: any number of compactions in a turn, each freeing at least min_free_ratio of
    the budget; between two, a request is the previous one with new messages at its end."""
    assembler = make(window=8000, output=1000)
    history = _long_turn(2)
    records, previous = [], None
    for step in range(2, 60):
        history += rounds(1, start=step)
        request = assembler.assemble(history, TOOLS, {"turn": 1})
        assert sent_tokens(request) <= assembler.budget()["limit"]
        assert tool_pairing_ok(request.messages) and request.messages[1]["content"] == C03_TASK
        compaction = request.report["compaction"]
        if compaction:
            records.append(compaction)
            assert compaction["tokens_before"] - compaction["tokens_after"] >= 0.1 * assembler.budget()["limit"]
        elif previous is not None:
            assert _shared_prefix(previous, request.messages) == len(previous), "only appended to"
        assert not request.report["final_fit_dropped"], "the fit step drops nothing"
        previous = request.messages
    assert len(records) >= 3 and {r["trigger"] for r in records} == {"auto"} and {r["turn_id"] for r in records} == {1}
    assert any(r["method"] != "masking" for r in records), "masking alone runs out: summaries take over"
    history.append({"role": "user", "content": "Also update the changelog."})
    request = assembler.assemble(history, TOOLS, {"turn": 2})
    assert request.messages[-1] == history[-1]


def test_a_summary_waits_while_the_guard_holds_unless_the_request_would_not_fit():
    """The thrash guard (`summary_wait`, set after a summary that freed less than min_free_ratio
    of the budget): over the trigger, with nothing worth masking, no compaction is made (and none
    announced); over the input budget, one is made all the same: the fit step drops nothing."""
    assembler = make(window=8000, output=1000)
    assembler.summary_wait = 10**9  # as after a summary that freed too little
    small = [SYSTEM, {"role": "user", "content": C03_TASK}, *rounds(19, chars=900)]  # none maskable
    tokens = COUNTER.count_messages(small, TOOLS)
    assert assembler.budget()["trigger"] < tokens <= assembler.budget()["limit"]
    request = assembler.assemble(small, TOOLS, {"turn": 1})
    assert request.report["compaction"] is None and request.messages == small and assembler.records == []
    bigger = [*small, *rounds(2, chars=900, start=19)]
    assert COUNTER.count_messages(bigger, TOOLS) > assembler.budget()["limit"]
    request = assembler.assemble(bigger, TOOLS, {"turn": 1})
    record = request.report["compaction"]
    assert record["method"] == "extractive" and record["masked"] == [] and not request.report["final_fit_dropped"]
    assert sent_tokens(request) <= assembler.budget()["limit"]


def test_C06_reasoning_content_survives_compaction_of_the_current_turn():
    assembler = make(window=8000, output=1000)
    history = _long_turn(30, reasoning=True)
    request = assembler.assemble(history, TOOLS, {"turn": 1})
    assert request.report["compaction"]["method"] in ("masking", "extractive")
    by_id = {m["tool_calls"][0]["id"]: m for m in history if m.get("tool_calls")}
    sent = [m for m in request.messages if m.get("tool_calls")]
    assert sent
    for message in sent:
        assert message["reasoning_content"] == by_id[message["tool_calls"][0]["id"]]["reasoning_content"]


def test_state_layer_is_reinjected_after_compaction():
    state = {"turn": 1, "todos": [{"content": "rename in src/", "status": "in_progress"},
                                  {"content": "update CHANGELOG.md", "status": "pending"}],
             "notes": [{"id": "n1", "title": "plan", "content": "parse_cfg has 40 callers"}],
             "memory_files": [{"path": "Memory.md", "content": "Prefer small patches."}]}
    assembler = make(window=8000, output=1000)
    history = _long_turn(40)
    request = assembler.assemble(history, TOOLS, state)
    assert request.report["compaction"] is not None
    system = request.messages[0]["content"]
    assert system.startswith(SYSTEM["content"]) and "Prefer small patches." in system, "memory files: system"
    block = request.messages[-1]["content"]
    assert request.messages[-1]["role"] == "user", "the state goes last, after the newest message"
    assert block.startswith("[State]\nTodo board:") and "[Evidence]\nNote (plan, id n1): parse_cfg has 40 callers" in block
    for text in ("[~] rename in src/", "[ ] update CHANGELOG.md"):
        assert text in block and text not in system
    assert set(request.report["layers"]) >= {"system", "state", "evidence", "memory", "history", "tool_results"}
    reasons = {p["reason"].split(":")[0] for p in request.report["packets"]}
    assert {"compacted", "kept verbatim", "state layer", "project memory"} <= reasons


def test_state_is_read_from_the_repository(tmp_path):
    from ctxagent.notes.store import NoteStore
    from ctxagent.todo.board import TodoBoard

    TodoBoard(tmp_path / ".ctxagent" / "todos.json").add("rename parse_cfg", status="in_progress")
    NoteStore(tmp_path / ".ctxagent" / "notes").create("rename plan", "parse_cfg lives in cfg.py")
    assembler = make(load_state=gather_state)
    history = [SYSTEM, {"role": "user", "content": "rename parse_cfg"}]
    request = assembler.assemble(history, TOOLS, {"turn": 1, "repo": str(tmp_path), "task": "rename parse_cfg"})
    assert "[~] rename parse_cfg" in request.messages[-1]["content"]
    assert "parse_cfg lives in cfg.py" in request.messages[-1]["content"]
    assert request.messages[0] == SYSTEM and request.messages[-1]["content"].startswith("rename parse_cfg\n\n[State]")
    assert request.report["problems"] == []


def test_a_failing_memory_source_is_reported_and_skipped():
    def broken(_query):
        raise OSError("memory.db is locked")

    request = make(memory_search=broken).assemble([SYSTEM, {"role": "user", "content": "hi"}], TOOLS,
                                                  {"turn": 1, "task": "hi"})
    assert request.messages[-1]["content"] == "hi"
    assert request.report["problems"] == ["memory search failed: OSError: memory.db is locked"]


OWN_AND_OTHER_MEMORIES = [
    {"id": "m1", "content": "Task: rename parse_cfg. Outcome: finished: renamed in 40 files", "memory_type": "episodic",
     "importance": 0.5, "metadata": {"session_id": "s-now", "turn": 1}},
    {"id": "m2", "content": "parse_cfg must keep a deprecated alias", "memory_type": "semantic", "importance": 0.5,
     "metadata": {"session_id": "s-before"}},
    {"id": "m3", "content": "parse_cfg callers live in src/cli", "importance": 0.5}]


def test_memories_of_this_session_are_not_sent_back_to_it():
    """Whatever the memory source: the session's history holds what its own memories say."""
    history = [SYSTEM, {"role": "user", "content": "rename parse_cfg"}]
    request = make(memory_search=lambda q: OWN_AND_OTHER_MEMORIES).assemble(
        history, TOOLS, {"turn": 2, "task": "rename parse_cfg", "session_id": "s-now"})
    sent = request.messages[-1]["content"]
    assert "deprecated alias" in sent and "src/cli" in sent and "renamed in 40 files" not in sent
    assert "memory:m1" not in {row["id"] for row in request.report["packets"]}
    other = make(memory_search=lambda q: OWN_AND_OTHER_MEMORIES).assemble(
        history, TOOLS, {"turn": 1, "task": "rename parse_cfg", "session_id": "s-later"})
    assert "renamed in 40 files" in other.messages[-1]["content"]  # another session's episode comes back
    assert "memory:m1" in {row["id"] for row in other.report["packets"]}


@pytest.mark.parametrize("what", ["task", "system", "tools"])
def test_overflow_error_when_the_irreducible_part_cannot_fit(what):
    big = "word " * 12_000
    history = [{**SYSTEM, "content": big if what == "system" else SYSTEM["content"]},
               {"role": "user", "content": big if what == "task" else "do it"}, *rounds(3)]
    tools = TOOLS if what != "tools" else [{**TOOLS[0], "function": {**TOOLS[0]["function"], "description": big}}]
    with pytest.raises(ContextOverflowError, match="input budget of 7,000 tokens"):
        make(window=8000, output=1000).assemble(history, tools, {"turn": 1})


def test_compact_returns_the_history_the_loop_keeps():
    assembler = make(window=8000, output=1000)
    history = _long_turn(20) + [{"role": "user", "content": "Also update the changelog."}]
    assembler.assemble(history[:5], TOOLS, {"turn": 1})
    new = assembler.compact(history)
    assert new[0] == SYSTEM and new[1]["content"] == C03_TASK and new[-1] == history[-1]
    assert any(is_summary_message(m) for m in new) and tool_pairing_ok(new)
    assert assembler.last_record.trigger == "overflow" and assembler.safety == pytest.approx(0.9)
    assert assembler.budget()["limit"] == int(7000 * 0.9)
    follow = new + rounds(2, start=90)
    request = assembler.assemble(follow, TOOLS, {"turn": 2})
    assert request.messages == alternate(follow), "the compacted history is taken as it is"
    assert [m["role"] for m in request.messages[1:4]] == ["user", "assistant", "user"], "task, bridge, summary"


def test_two_user_messages_in_a_row_get_a_bridge_that_is_counted():
    """Tester finding 10: a summary right after the task made two user messages in a row,
    which chat templates demanding alternation (Mistral-style) reject."""
    history = [SYSTEM, {"role": "user", "content": "Fix the bug."}, {"role": "user", "content": "Go on."}]
    request = make().assemble(history, TOOLS, {"turn": 2})
    assert [m["role"] for m in request.messages] == ["system", "user", "assistant", "user"]
    assert request.report["budget"]["used_tokens"] == sent_tokens(request)


def test_manual_compact_with_focus_keeps_budget():
    assembler = make(window=8000, output=1000)
    new = assembler.compact(_long_turn(20), focus="the rename of parse_cfg", trigger="manual")
    assert assembler.safety == 1.0 and assembler.last_record.focus == "the rename of parse_cfg"
    assert "the rename of parse_cfg" in next(m["content"] for m in new if is_summary_message(m))


def test_view_resets_when_the_history_is_replaced():
    assembler = make(window=8000, output=1000)
    assembler.assemble(_long_turn(40), TOOLS, {"turn": 1})
    other = [SYSTEM, {"role": "user", "content": "A new session."}]
    assert assembler.assemble(other, TOOLS, {"turn": 1}).messages == other


def test_preview_changes_nothing():
    assembler = make(window=8000, output=1000)
    history = _long_turn(40)
    preview = assembler.preview(history, TOOLS, {"turn": 1})
    assert preview.report["compaction"] is not None
    assert assembler.records == [] and assembler.compacted_turns == set() and assembler.calls == 0
    assert assembler.assemble(history, TOOLS, {"turn": 1}).messages == preview.messages


def test_on_compaction_is_called_for_automatic_compactions():
    seen = []
    assembler = make(window=8000, output=1000, on_compaction=seen.append)
    assembler.assemble(_long_turn(40), TOOLS, {"turn": 1})
    assert [r.trigger for r in seen] == ["auto"]
    assert seen[0].dropped or seen[0].masked


def test_every_call_writes_a_snapshot_without_secrets(tmp_path):
    from ctxagent.context.record.snapshot import read_snapshot
    from ctxagent.storage.files import state_dir

    assembler = make(window=8000, output=1000, snapshots=True, secrets=["sk-test-very-secret-key-123"])
    history = _long_turn(40)
    history[1] = {"role": "user", "content": C03_TASK + " My key is sk-test-very-secret-key-123."}
    state = {"turn": 1, "session_id": "20260101-000000-abcd", "repo": str(tmp_path), "task": C03_TASK}
    for n in (1, 2):
        request = assembler.assemble(history, TOOLS, {**state, "call_index": n})
        assert request.report["snapshot"].endswith(f"{n}.json")
    snap = read_snapshot(state_dir(tmp_path), "last", 1)
    assert snap["call"] == 1 and snap["report"]["compaction"]["method"] in ("masking", "extractive")
    assert snap["request"]["model"] == "gpt-4o-mini" and snap["request"]["tools"] == TOOLS
    assert "sk-test-very-secret-key-123" not in json.dumps(snap)
    dropped = [p for p in snap["report"]["packets"] if p["decision"] == "dropped"]
    assert dropped and all(p["reason"].startswith(("compacted", "trimmed")) for p in dropped)


def test_a_tool_call_row_shows_its_arguments_so_grep_finds_it():
    """Tester finding: a call's row said only `calls terminal`, so `inspect --grep utils.py`
    could not find the call that read the file."""
    history = [SYSTEM, {"role": "user", "content": "Read it."},
               {"role": "assistant", "content": "Reading.", "tool_calls": [call("c1", command="cat click/utils.py")]},
               {"role": "tool", "tool_call_id": "c1", "content": "def echo(): ..."}]
    rows = {r["id"]: r for r in make().assemble(history, TOOLS, {"turn": 1}).report["packets"]}
    assert rows["msg2"]["preview"].startswith("Reading. [calls terminal ")
    assert "cat click/utils.py" in rows["msg2"]["preview"]


def test_a_new_assembler_numbers_on_after_the_session_s_snapshots(tmp_path):
    """A resumed session (a new process: a new assembler, the loop counting from 1 again)
    writes call 7 after calls 1..6, and overwrites none of them."""
    from ctxagent.context.record.snapshot import list_calls, read_snapshot, write_snapshot
    from ctxagent.storage.files import ensure_state_dir

    root = ensure_state_dir(tmp_path)
    session = "20260101-000000-abcd"
    old = {n: write_snapshot(root, session, n, {"messages": [{"role": "user", "content": f"old {n}"}]}, {"call": n})
           for n in range(1, 7)}
    before = {n: path.read_bytes() for n, path in old.items()}
    assembler = make(window=8000, output=1000, snapshots=True)
    state = {"turn": 1, "session_id": session, "repo": str(tmp_path), "task": "go on"}
    history = [SYSTEM, {"role": "user", "content": "go on"}]
    for index in (1, 2):  # the loop's call_index starts again at 1 in the new process
        request = assembler.assemble(history, TOOLS, {**state, "call_index": index})
        assert request.report["call"] == 6 + index and request.report["snapshot"].endswith(f"{6 + index}.json")
    assert list_calls(root, session) == list(range(1, 9))
    assert {n: path.read_bytes() for n, path in old.items()} == before
    assert read_snapshot(root, "last")["call"] == 8 and assembler.calls == 8
    preview = assembler.preview(history, TOOLS, {**state, "call_index": 1})
    assert preview.report["call"] == 9 and assembler.calls == 8 and list_calls(root, session)[-1] == 8


def test_a_summary_kept_as_history_is_reported_as_a_summary():
    """After /compact the loop keeps the summary as a user message; its row said 'user, kept verbatim'."""
    from ctxagent.context.compaction.sections import SUMMARY_MARKER

    history = [SYSTEM, {"role": "user", "content": "Fix the bug."},
               {"role": "user", "content": f"{SUMMARY_MARKER}\nGoal: fix the bug."}, {"role": "user", "content": "Go on."}]
    rows = {r["id"]: r for r in make().assemble(history, TOOLS, {"turn": 2}).report["packets"]}
    assert (rows["msg2"]["type"], rows["msg2"]["reason"]) == ("summary", "compaction summary")
    assert (rows["msg1"]["type"], rows["msg1"]["reason"]) == ("user", "kept verbatim")


def test_a_cut_result_row_counts_the_tokens_sent_and_the_layers_add_up():
    """Tester finding 7: truncated rows showed their size before cutting (5,209 + 7,537 in a
    tool_results layer of 6,608)."""
    history = [SYSTEM, {"role": "user", "content": "Show me the logs."},
               {"role": "assistant", "content": None, "tool_calls": [call("a", command="cat a.log"), call("b", command="cat b.log")]},
               {"role": "tool", "tool_call_id": "a", "content": "line a: all good\n" * 3000},
               {"role": "tool", "tool_call_id": "b", "content": "line b: all good\n" * 3000}]
    report = make(window=8000, output=1000).assemble(history, TOOLS, {"turn": 1}).report
    rows = [r for r in report["packets"] if r["layer"] == "tool_results"]
    assert {r["decision"] for r in rows} == {"truncated"}
    assert sum(r["tokens"] for r in rows) == report["layers"]["tool_results"]["used"]


def test_a_compaction_whose_summary_would_not_shrink_the_context_is_refused():
    """Trial 12-02: a summary longer than what it replaces wins no room: after a context-length
    error it is refused and the history stays; `/compact` (the user asked) still writes it, and
    its record shows the growth (the CLI says so: tests/e2e/test_day_one_05_compact.py)."""
    from ctxagent.context.compaction.compactor import NothingToCompact

    settings = ModelSettings(provider="custom", model="fake-model", base_url="http://127.0.0.1:9/v1",
                             api_key="sk-test-0123456789abcdef", context_window=32_000, max_output_tokens=1000)
    history = [{"role": "system", "content": "You are ctxagent."},
               {"role": "user", "content": "Fix the greeting in src/app.py; the version is v9-TEST."}]
    for i in range(4):
        history += [{"role": "assistant", "content": f"Looking at file {i}."}, {"role": "user", "content": f"ok {i}"}]
    history.append({"role": "assistant", "content": "The long answer.\n" + "word " * 3000})
    before = [dict(m) for m in history]

    def assembler() -> ContextAssembler:
        return ContextAssembler(settings, summarize=None, counter=TokenCounter("gpt-4o-mini"), snapshots=False,
                                load_state=None)

    overflow = assembler()
    with pytest.raises(NothingToCompact, match=r"would not shrink the context \([\d,]+ -> [\d,]+ tokens\)"):
        overflow.compact(history)
    assert history == before and overflow.last_record is None
    manual = assembler()
    assert len(manual.compact(history, trigger="manual")) < len(history)
    assert manual.last_record.tokens_after >= manual.last_record.tokens_before
