"""Message rules: pairing repair (C02, C06, C07), history units (C01), tool-result truncation (C05)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxagent.context.messages import (
    INTERRUPTED_RESULT,
    MessageError,
    history_units,
    is_valid_pairing,
    normalize,
    repair_pairing,
    truncate_observation,
    truncate_tool_result,
)
from ctxagent.context.packet import Message


def call(cid: str, name: str = "terminal", args: str = '{"command": "ls"}') -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def assistant_calls(*ids: str, content=None, **extra) -> dict:
    return {"role": "assistant", "content": content, "tool_calls": [call(i) for i in ids], **extra}


def result(cid: str, content: str = "ok") -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": content}


C02_HISTORY = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "grep TODO"},
    {"role": "assistant", "content": None, "tool_calls": [call("call_a", "grep"), call("call_b", "wc")]},
    result("call_a", "3 hits"),
    {"role": "user", "content": "hi"},
]


def test_C02a_call_without_result_gets_synthetic_result() -> None:
    fixed = repair_pairing(C02_HISTORY)
    assert is_valid_pairing(fixed) and not is_valid_pairing(C02_HISTORY)
    assert fixed[3] == result("call_a", "3 hits")
    assert fixed[4] == {"role": "tool", "tool_call_id": "call_b", "content": INTERRUPTED_RESULT}
    assert fixed[5] == {"role": "user", "content": "hi"}
    assert C02_HISTORY[3:] == [result("call_a", "3 hits"), {"role": "user", "content": "hi"}]  # input untouched


def test_C02a_assistant_with_neither_content_nor_calls_is_dropped() -> None:
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": ""},
               {"role": "assistant", "content": None, "tool_calls": []}, {"role": "assistant", "content": "  "}]
    assert repair_pairing(history) == [{"role": "user", "content": "hi"}]


def test_C02b_valid_list_comes_back_unchanged() -> None:
    valid = repair_pairing(C02_HISTORY)
    again = repair_pairing(valid)
    assert again == valid
    assert all(a is b for a, b in zip(again, valid))


def test_orphan_and_duplicate_results_are_dropped() -> None:
    history = [result("ghost"), {"role": "user", "content": "go"}, assistant_calls("c1"), result("c1", "first"),
               result("c1", "second"), result("c9", "stray")]
    fixed = repair_pairing(history)
    assert fixed == [{"role": "user", "content": "go"}, assistant_calls("c1"), result("c1", "first")]
    assert fixed[0]["role"] != "tool"


def test_result_after_a_user_message_moves_back_to_its_call() -> None:
    history = [{"role": "user", "content": "go"}, assistant_calls("c1"), {"role": "user", "content": "wait"}, result("c1", "late")]
    fixed = repair_pairing(history)
    assert fixed == [history[0], history[1], result("c1", "late"), history[2]]


def test_C06_reasoning_content_is_kept() -> None:
    msg = assistant_calls("c1", reasoning_content="I should list the files first.")
    fixed = repair_pairing([{"role": "user", "content": "ls"}, msg])
    assert fixed[1]["reasoning_content"] == "I should list the files first."
    assert fixed[1] is msg


@pytest.mark.parametrize("content", [None, ""])
def test_C07_assistant_with_calls_is_never_dropped_for_empty_content(content) -> None:
    msg = assistant_calls("c1", content=content)
    fixed = repair_pairing([{"role": "user", "content": "x"}, msg, result("c1")])
    assert fixed[1] is msg and fixed[1]["content"] == content
    assert history_units(fixed) == [[fixed[0]], [msg, fixed[2]]]


def test_history_units_group_call_and_results() -> None:
    history = repair_pairing([{"role": "user", "content": "a"}, assistant_calls("c1", "c2"), result("c1"), result("c2"),
                              {"role": "assistant", "content": "done"}])
    assert [len(u) for u in history_units(history)] == [1, 3, 1]


def test_normalize_accepts_messages_and_dicts_and_rejects_bad_roles() -> None:
    out = normalize([Message(content="hi", role="user", timestamp=1000.0), {"role": "assistant", "content": "yo"}])
    assert out[0] == {"role": "user", "content": "hi", "timestamp": 1000.0}
    with pytest.raises(MessageError, match="role"):
        normalize([{"role": "robot", "content": "x"}])
    with pytest.raises(MessageError, match="content"):
        normalize([{"role": "user", "content": 42}])
    with pytest.raises(MessageError):
        normalize([42])


def test_C05_observation_keeps_head_and_tail_with_a_marker() -> None:
    text = "".join(f"line {i}\n" for i in range(30_000))  # ~230,000 characters
    cut = truncate_observation(text, 13_000)
    assert len(cut) <= 13_000
    assert cut.startswith("line 0\n") and cut.endswith("line 29999\n")
    marker = re.search(r"\[\.\.\. ([\d,]+) characters truncated \.\.\.\]", cut)
    assert marker is not None
    removed = int(marker.group(1).replace(",", ""))
    assert removed == len(text) - len(cut) + len(marker.group(0)) + 2  # what went = all minus what stayed
    assert truncate_observation("short", 100) == "short"


def test_truncate_observation_small_limits() -> None:
    assert truncate_observation("x" * 100, 10) == "x" * 10
    with pytest.raises(MessageError):
        truncate_observation("abc", 0)


def test_C05_json_result_keeps_every_key() -> None:
    data = {"path": "src/app.py", "content": "y" * 100_000, "matches": list(range(3000)), "nested": {"log": "z" * 50_000, "ok": True}}
    cut = truncate_tool_result(json.dumps(data), 2_000)
    assert len(cut) <= 2_000
    parsed = json.loads(cut)
    assert set(parsed) == set(data) and set(parsed["nested"]) == {"log", "ok"}
    assert parsed["path"] == "src/app.py" and parsed["nested"]["ok"] is True
    assert "characters truncated" in parsed["content"]
    assert parsed["matches"][0] == 0 and parsed["matches"][-1] == 2999


def test_truncate_tool_result_plain_text_and_invalid_json() -> None:
    assert "characters truncated" in truncate_tool_result("{not json" + "a" * 5000, 500)
    assert truncate_tool_result("small", 500) == "small"


# --- property tests ---------------------------------------------------------------------

_ids = st.sampled_from(["c1", "c2", "c3", "c4"])
_message = st.one_of(
    st.builds(lambda t: {"role": "user", "content": t}, st.text(max_size=5)),
    st.builds(lambda t: {"role": "assistant", "content": t}, st.sampled_from([None, "", "ok"])),
    st.builds(lambda ids, c: {"role": "assistant", "content": c, "tool_calls": [call(i) for i in ids]},
              st.lists(_ids, max_size=3, unique=True), st.sampled_from([None, "", "hm"])),
    st.builds(lambda i: {"role": "tool", "tool_call_id": i, "content": "r"}, _ids),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_message, max_size=14))
def test_property_repair_gives_valid_pairing_and_is_idempotent(history: list[dict]) -> None:
    fixed = repair_pairing(history)
    assert is_valid_pairing(fixed)
    assert repair_pairing(fixed) == fixed
    calls_in = [m for m in history if m.get("role") == "assistant" and m.get("tool_calls")]
    calls_out = [m for m in fixed if m.get("role") == "assistant" and m.get("tool_calls")]
    assert calls_out == calls_in  # no assistant with calls is ever dropped (C07)
    units = history_units(fixed)
    assert [m for u in units for m in u] == fixed
    assert all(m.get("role") != "tool" for u in units for m in u[:1])


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=0, max_size=3000), st.integers(min_value=1, max_value=2000))
def test_property_truncate_observation_never_exceeds_limit(text: str, limit: int) -> None:
    cut = truncate_observation(text, limit)
    assert len(cut) <= max(limit, 0)
    if len(text) <= limit:
        assert cut == text


def test_a_tools_own_marker_survives_a_second_cut() -> None:
    """The terminal keeps 64 KB of a 30 MB output with its marker in the middle; the history's
    40,000-character cap must not cut that marker away (the model would not know the real size)."""
    own = "[... 29,950,000 bytes of output dropped (kept the first and last parts, limit 64000 bytes) ...]"
    text = "a\n" * 20_000 + f"\n{own}\n" + "b\n" * 20_000
    for cut in (truncate_observation(text, 40_000),
                json.loads(truncate_tool_result(json.dumps({"exit_code": 0, "stdout": text}), 40_000))["stdout"]):
        assert len(cut) <= 40_000 and cut.startswith("a\n") and cut.endswith("b\n")
        assert "characters truncated, among them: 29,950,000 bytes of output dropped" in cut
    plain = truncate_observation("x\n" * 30_000, 1_000)
    assert "characters truncated ...]" in plain and "among them" not in plain


def test_a_second_cut_of_our_own_adds_up_instead_of_nesting() -> None:
    text = "".join(f"line {i}\n" for i in range(5_000))
    once = truncate_observation(text, 4_000)
    twice = truncate_observation(once, 1_000)
    [count] = re.findall(r"\[\.\.\. ([\d,]+) characters truncated \.\.\.\]", twice)
    assert "among them" not in twice and int(count.replace(",", "")) == len(text) - len(twice) + len(
        re.search(r"\[\.\.\..*\]", twice)[0]) + 2
