"""Every tool call gets exactly one result (C02), empty-content assistant calls survive (C07)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxagent.context.messages import INTERRUPTED_RESULT, pairing_errors, repair_pairing


def assistant(*ids: str, content: str | None = None) -> dict:
    calls = [{"id": i, "type": "function", "function": {"name": "grep", "arguments": "{}"}} for i in ids]
    return {"role": "assistant", "content": content, **({"tool_calls": calls} if calls else {})}


def tool(call_id: str, content: str = "ok") -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def test_C02a_missing_result_gets_a_synthetic_one_in_place() -> None:
    history = [{"role": "system", "content": "s"}, {"role": "user", "content": "grep TODO"},
               assistant("call_a", "call_b"), tool("call_a", "3 hits"), {"role": "user", "content": "hi"}]
    out = repair_pairing(history)
    assert out[4] == tool("call_b", INTERRUPTED_RESULT) and out[5]["content"] == "hi"
    assert pairing_errors(out) == []


def test_C02b_valid_list_comes_back_unchanged() -> None:
    history = [{"role": "user", "content": "x"}, assistant("c1"), tool("c1"), {"role": "assistant", "content": "done"}]
    assert repair_pairing(history) == history


def test_orphan_and_duplicate_results_are_dropped_and_empty_assistant_removed() -> None:
    history = [tool("ghost"), {"role": "user", "content": "x"}, assistant("c1"), tool("c1"), tool("c1", "again"),
               {"role": "assistant", "content": ""}, {"role": "user", "content": "y"}]
    out = repair_pairing(history)
    assert out == [{"role": "user", "content": "x"}, assistant("c1"), tool("c1"), {"role": "user", "content": "y"}]


def test_C07_tool_call_message_with_empty_content_is_kept() -> None:
    for content in (None, ""):
        history = [{"role": "user", "content": "x"}, assistant("c1", content=content), tool("c1")]
        assert repair_pairing(history) == history


message = st.one_of(
    st.builds(lambda ids: assistant(*ids), st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True, max_size=3)),
    st.builds(tool, st.sampled_from(["a", "b", "c", "d", "z"])),
    st.just({"role": "user", "content": "u"}),
    st.just({"role": "assistant", "content": "text"}),
)


@given(st.lists(message, max_size=12))
def test_repair_always_yields_valid_pairing_and_is_idempotent(history: list[dict]) -> None:
    out = repair_pairing(history)
    assert pairing_errors(out) == []
    assert repair_pairing(out) == out
