"""ContextBuilder end to end: cases C01, C04, C05, C06, C07 through the builder, sections,
sources, budgets, and the budget/pairing properties for random histories."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxagent.context import ContextBuilder, ContextConfig, ContextPacket, Message, TokenCounter
from ctxagent.context.messages import call_ids, is_valid_pairing
from ctxagent.errors import ContextOverflowError

NOW = 1_700_000_000.0


def call(cid: str, name: str = "terminal", args: str = '{"command": "ls"}') -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def builder(max_tokens: int = 8000, model: str | None = "gpt-4o", **config) -> ContextBuilder:
    return ContextBuilder(config=ContextConfig(max_tokens=max_tokens, **config), model=model, clock=lambda: NOW)


def assert_request_invariants(messages: list[dict], report: dict, counter: TokenCounter, tools=None) -> None:
    assert is_valid_pairing(messages)
    assert [m for m in messages if m["role"] != "system"][0]["role"] != "tool"
    assert messages[-1]["role"] == "user"
    assert counter.count_messages(messages, tools) == report["budget"]["used_tokens"] <= report["budget"]["input_budget"]


C01_HISTORY = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "List the repo."},
    {"role": "assistant", "content": None, "tool_calls": [call("call_1")]},
    {"role": "tool", "tool_call_id": "call_1", "content": "".join(f"file_{i:04d}.py  " for i in range(330))},
    {"role": "assistant", "content": "There are 3 files."},
]


@pytest.mark.parametrize("max_tokens", [200, 260, 400, 700, 1200, 1500, 3000])
def test_C01_tool_results_never_lose_their_call(max_tokens: int) -> None:
    b = builder(max_tokens, reserve_ratio=0.0)
    messages, report = b.build_messages("Now read main.py", C01_HISTORY)
    assert_request_invariants(messages, report, b.counter)
    has_call = any(call_ids(m) for m in messages)
    has_result = any(m["role"] == "tool" for m in messages)
    assert has_call == has_result
    assert messages[-1]["content"] == "Now read main.py"
    assert messages[1] == {"role": "user", "content": "List the repo."}  # first user message pinned


def test_C01_cut_between_call_and_result_is_impossible_even_when_oldest_first_would() -> None:
    b = builder(900, reserve_ratio=0.0)
    messages, report = b.build_messages("Now read main.py", C01_HISTORY)
    roles = [m["role"] for m in messages]
    assert "tool" not in roles and roles == ["system", "user", "assistant", "user"]
    unit = next(r for r in report["packets"] if r["id"] == "msg-1")
    assert unit["decision"] == "dropped" and "needs" in unit["reason"]


def test_C04_cjk_packet_is_trimmed_to_fit() -> None:
    b = builder(8000, model="deepseek-chat")
    big = ContextPacket("你好世界" * 2500, metadata={"type": "rag"}, relevance_score=0.9)
    text = b.build("你好世界是什么意思", custom_packets=[big])
    report = b.last_report
    assert b.counter.count("你好世界" * 2500) >= 10_000
    assert report["budget"]["used_tokens"] <= report["budget"]["input_budget"] < 8000
    row = next(r for r in report["packets"] if r["type"] == "rag")
    assert row["decision"] == "truncated" and row["tokens"] < 8000
    assert "characters truncated" in text


def test_C04_chinese_query_finds_chinese_packet() -> None:
    b = builder(3000)
    packets = [ContextPacket("Pandas内存优化的核心策略:使用category类型,分块读取", metadata={"type": "rag"}),
               ContextPacket("The weather in Paris is mild in spring", metadata={"type": "rag"})]
    b.build("如何优化Pandas的内存占用?", custom_packets=packets)
    rows = {r["preview"][:6]: r for r in b.last_report["packets"]}
    assert rows["Pandas"]["relevance"] > 0 and rows["Pandas"]["decision"] == "selected"
    assert rows["The we"]["relevance"] == 0


def test_C05_huge_tool_result_is_cut_and_the_request_fits() -> None:
    history = [{"role": "user", "content": "Dump the log."}, {"role": "assistant", "content": None, "tool_calls": [call("c1")]},
               {"role": "tool", "tool_call_id": "c1", "content": "".join(f"log line {i}\n" for i in range(16_000))}]
    assert len(history[2]["content"]) > 200_000
    b = builder(8000)
    messages, report = b.build_messages(None, history)  # the current turn is the call and its result
    assert is_valid_pairing(messages)
    tool = messages[-1]
    assert tool["role"] == "tool" and re.search(r"\[\.\.\. [\d,]+ characters truncated \.\.\.\]", tool["content"])
    assert tool["content"].startswith("log line 0\n") and tool["content"].rstrip().endswith("log line 15999")
    assert b.counter.count_messages(messages) <= report["budget"]["input_budget"]
    assert messages[0] == {"role": "user", "content": "Dump the log."}


def test_C05_huge_result_in_earlier_turn_with_a_new_request() -> None:
    history = [{"role": "user", "content": "Dump the log."}, {"role": "assistant", "content": None, "tool_calls": [call("c1")]},
               {"role": "tool", "tool_call_id": "c1", "content": "x" * 200_000}, {"role": "assistant", "content": "Done."}]
    b = builder(8000)
    messages, report = b.build_messages("Summarise it.", history)
    assert_request_invariants(messages, report, b.counter)


def test_C06_reasoning_content_survives_trimming_of_the_current_turn() -> None:
    history = [{"role": "user", "content": "Fix the bug."},
               {"role": "assistant", "content": None, "reasoning_content": "Look at the test log first.", "tool_calls": [call("c1")]},
               {"role": "tool", "tool_call_id": "c1", "content": "E" * 60_000}]
    b = builder(4000, model="deepseek-chat")
    messages, report = b.build_messages(None, history)
    assistant = next(m for m in messages if m["role"] == "assistant")
    assert assistant["reasoning_content"] == "Look at the test log first." and assistant["content"] is None
    assert report["budget"]["used_tokens"] <= report["budget"]["input_budget"]


@pytest.mark.parametrize("content", [None, ""])
def test_C07_assistant_with_calls_and_empty_content_is_kept(content) -> None:
    history = [{"role": "user", "content": "ls"}, {"role": "assistant", "content": content, "tool_calls": [call("c1")]},
               {"role": "tool", "tool_call_id": "c1", "content": "a.py"}, {"role": "assistant", "content": "One file."}]
    messages, _ = builder().build_messages("thanks", history)
    assistant = [m for m in messages if m["role"] == "assistant" and m.get("tool_calls")]
    assert len(assistant) == 1 and assistant[0]["content"] == content


def test_text_build_has_every_section_and_renders_every_packet_type() -> None:
    types = ["memory", "rag", "note", "state", "todo", "code_structure", "git_history", "tool_result", "custom", "brand_new"]
    packets = [ContextPacket(f"fact about parse_cfg number {i} {t}", metadata={"type": t}, relevance_score=0.8) for i, t in enumerate(types)]
    b = builder(4000)
    text = b.build("How is parse_cfg used?", [Message("earlier question", "user")], "You are careful.", packets)
    heads = re.findall(r"^\[(.+?)\]$", text, flags=re.MULTILINE)
    assert heads == ["Role & Policies", "Task", "State", "Evidence", "Context", "Output"]
    for t in types:
        assert f" {t}" in text, t
    assert "earlier question" in text and "You are careful." in text


def test_messages_block_puts_context_before_the_request() -> None:
    b = builder(4000)
    packets = [ContextPacket("parse_cfg lives in config.py", metadata={"type": "rag"}),
               ContextPacket("Todo: rename parse_cfg", metadata={"type": "todo"}),
               ContextPacket("User prefers short answers", metadata={"type": "memory"}, relevance_score=0.9)]
    messages, _ = b.build_messages("Where is parse_cfg?", system_instructions="Be brief.", custom_packets=packets)
    assert messages[0] == {"role": "system", "content": "Be brief."}
    last = messages[-1]["content"]
    assert last.index("[State]") < last.index("[Evidence]") < last.index("[Context]") < last.index("[Task]\nWhere is parse_cfg?")
    assert last.endswith("Where is parse_cfg?")


def test_failing_source_is_reported_and_skipped() -> None:
    class Broken:
        def run(self, args):
            raise RuntimeError("index is locked")

    class TextRag:
        def run(self, args):
            assert args == {"action": "search", "query": "parse_cfg", "limit": 5}
            return "Found 2 results:\n1. parse_cfg is defined in config.py\n2. parse_cfg is called from main.py"

    b = ContextBuilder(memory_tool=Broken(), rag_tool=TextRag(), config=ContextConfig(max_tokens=3000), clock=lambda: NOW)
    text = b.build("parse_cfg")
    assert b.last_report["sources"]["memory_tool"] == {"ok": False, "error": "RuntimeError: index is locked"}
    assert b.last_report["sources"]["rag_tool"] == {"ok": True, "items": 2}
    assert "parse_cfg is defined in config.py" in text and "parse_cfg is called from main.py" in text


def test_memory_search_uses_textbook_arguments_and_item_shapes() -> None:
    seen = []

    class Item:
        def __init__(self, content):
            self.content, self.timestamp, self.importance = content, "2023-11-14T22:13:20+00:00", 0.8

    class Memory:
        def run(self, args):
            seen.append(args)
            return {"results": [{"content": "prefers tabs", "score": 0.7}, Item("uses parse_cfg daily")]}

    b = ContextBuilder(memory_tool=Memory(), config=ContextConfig(max_tokens=3000, min_relevance=0.0), clock=lambda: NOW)
    b.build("what does the user prefer about parse_cfg")
    assert seen == [{"action": "search", "query": "what does the user prefer about parse_cfg", "limit": 10, "min_importance": 0.3}]
    rows = [r for r in b.last_report["packets"] if r["type"] == "memory"]
    assert len(rows) == 2 and all(r["decision"] == "selected" for r in rows)


def test_overflow_of_required_parts_raises_a_clear_error() -> None:
    with pytest.raises(ContextOverflowError, match="input budget"):
        builder(200).build_messages("hi", system_instructions="rule " * 400)


def test_empty_query_is_rejected() -> None:
    with pytest.raises(ValueError):
        builder().build("   ")


def test_current_request_is_not_duplicated_when_history_ends_with_it() -> None:
    history = [{"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "second"}]
    messages, _ = builder().build_messages("second", history)
    assert [m["content"] for m in messages] == ["first", "ok", "second"]


def test_loop_mode_needs_a_user_message() -> None:
    with pytest.raises(ValueError, match="user"):
        builder().build_messages(None, [{"role": "assistant", "content": "hi"}])


def test_tool_schemas_count_against_the_budget() -> None:
    tools = [{"type": "function", "function": {"name": f"tool_{i}", "description": "does things " * 40,
                                               "parameters": {"type": "object", "properties": {}}}} for i in range(5)]
    history = [{"role": "user", "content": "m " * 50}, {"role": "assistant", "content": "r " * 50}] * 20
    b = builder(2000)
    messages, report = b.build_messages("go", history, tools=tools)
    assert report["budget"]["tools_tokens"] > 500
    assert_request_invariants(messages, report, b.counter, tools)


# --- property: the budget always holds, pairing always valid -------------------------------

_text = st.text(alphabet=st.sampled_from("ab cd 数据 parse_cfg\n{}\":"), max_size=400)


@st.composite
def histories(draw) -> list[dict]:
    out: list[dict] = []
    for i in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["user", "assistant", "calls"]))
        if kind == "calls":
            ids = [f"c{i}_{j}" for j in range(draw(st.integers(1, 3)))]
            out.append({"role": "assistant", "content": draw(st.sampled_from([None, "", "calling"])),
                        "tool_calls": [call(cid) for cid in ids]})
            for cid in ids[: draw(st.integers(0, len(ids)))]:
                out.append({"role": "tool", "tool_call_id": cid, "content": draw(_text) * draw(st.integers(1, 30))})
        else:
            out.append({"role": kind, "content": draw(_text) or "x"})
    return out


_packets = st.lists(st.builds(
    lambda text, kind, rel: ContextPacket(text or "y", metadata={"type": kind}, relevance_score=rel),
    _text, st.sampled_from(["memory", "rag", "note", "todo", "custom", "tool_result"]),
    st.one_of(st.none(), st.floats(0, 1))), max_size=8)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), _packets, st.integers(300, 6000), st.sampled_from([None, "gpt-4o"]), st.booleans(), st.booleans())
def test_property_budget_never_exceeded(history, packets, max_tokens, model, with_tools, compression) -> None:
    tools = [{"type": "function", "function": {"name": "terminal", "description": "run", "parameters": {}}}] if with_tools else None
    b = ContextBuilder(config=ContextConfig(max_tokens=max_tokens, enable_compression=compression,
                                            tool_result_max_chars=2000), model=model, clock=lambda: NOW)
    messages, report = b.build_messages("what about parse_cfg?", history, "Be careful.", packets, tools=tools)
    assert_request_invariants(messages, report, b.counter, tools)
    assert messages[-1]["content"].endswith("what about parse_cfg?")
    text = b.build("what about parse_cfg?", history, "Be careful.", packets)
    assert b.counter.count(text) <= b.last_report["budget"]["input_budget"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.integers(600, 6000))
def test_property_loop_mode_keeps_pairing_and_budget(history, max_tokens) -> None:
    history = [{"role": "user", "content": "task"}, *history]
    b = ContextBuilder(config=ContextConfig(max_tokens=max_tokens, tool_result_max_chars=2000), clock=lambda: NOW)
    try:
        messages, report = b.build_messages(None, history)
    except ContextOverflowError:
        return  # only when the current request itself cannot fit
    assert is_valid_pairing(messages)
    assert b.counter.count_messages(messages) <= report["budget"]["input_budget"]


def test_additional_packets_is_the_textbooks_name_for_custom_packets() -> None:
    note = ContextPacket("[Note: Dependency conflict]\nPin requests to 2.31.", metadata={"type": "note"})
    extra = ContextPacket("The dependency conflict comes from build-07 pinning urllib3.", metadata={"type": "custom"})
    text = builder().build(user_query="How do I fix the dependency conflict?", additional_packets=[note],
                           custom_packets=[extra])
    assert "Pin requests to 2.31." in text and "build-07" in text
    messages, report = builder().build_messages("How do I fix the dependency conflict?", additional_packets=[note])
    assert "Pin requests to 2.31." in "".join(str(m["content"]) for m in messages)
    assert [p["decision"] for p in report["packets"] if p["type"] == "note"] == ["selected"]


def test_a_build_leaves_the_garbage_collector_as_it_found_it() -> None:
    """The collector is paused during a build only: on again after it, even after an
    error, and still off if the caller had turned it off."""
    import gc

    builder = ContextBuilder(config=ContextConfig(max_tokens=200), model="gpt-4o")
    assert gc.isenabled()
    builder.build_messages("short question", [], "You are helpful.")
    assert gc.isenabled()
    with pytest.raises(ContextOverflowError):
        builder.build("x " * 2000, [], "You are helpful.")
    assert gc.isenabled()
    gc.disable()
    try:
        builder.build_messages("short question", [], "You are helpful.")
        assert not gc.isenabled()
    finally:
        gc.enable()
