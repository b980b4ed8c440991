"""Compaction: masking, LLM and extractive summaries, carry-forward (cases C01, C03, C06)."""

from __future__ import annotations

import pytest

from ctxagent.context.compaction.compactor import Budget, CompactionConfig, compact_conversation
from ctxagent.context.compaction.masking import MIN_MASK_CHARS, mask_observations
from ctxagent.context.compaction.sections import SECTIONS, SUMMARY_MARKER, is_summary_message, render_summary
from ctxagent.context.messages import is_valid_pairing
from ctxagent.errors import ConfigError
from ctxagent.text.tokens import TokenCounter
from tests.context.long_history import C03_LAST, C03_TASK, USELESS, c03_history, call, rounds, tool_pairing_ok

COUNTER = TokenCounter("gpt-4o-mini")
SYSTEM = {"role": "system", "content": "You are ctxagent, a coding agent."}


def measure(convo: list[dict]) -> int:
    return COUNTER.count_messages([SYSTEM, *convo])


def compact(convo, *, target=3000, limit=6000, **kw):
    return compact_conversation(convo, measure=measure, count_text=COUNTER.count, budget=Budget(target, limit), **kw)


def good_summarizer(messages: list[dict]) -> str:
    """A model that writes a proper summary (the injected callable, not a mock of our code)."""
    assert messages[0]["role"] == "system" and "Key facts" in messages[0]["content"]
    assert "Messages to summarize" in messages[-1]["content"]
    return render_summary({
        "goal": ["Rename parse_cfg to parse_config everywhere."],
        "progress": ["Read src/mod0.py to src/mod38.py; all call parse_cfg."],
        "constraints": ["Keep the release tag."],
        "facts": ["[version] v9-TEST (stated by user)", "[id] parse_cfg"],
        "state": ["No file changed yet."],
        "next": ["Patch every module, then update the changelog."],
    })


def summary_of(convo: list[dict]) -> str:
    found = [m["content"] for m in convo if is_summary_message(m)]
    assert len(found) == 1, "exactly one summary message"
    return found[0]


# -- masking ---------------------------------------------------------------------

def test_masking_placeholder_names_call_its_first_line_and_how_to_recover():
    convo = [{"role": "user", "content": "read it"},
             {"role": "assistant", "content": None, "tool_calls": [call("c1", command="cat src/a.py")]},
             {"role": "tool", "tool_call_id": "c1", "content": "import os\n" + "x" * 2335},
             *rounds(3)]
    out, record = compact(convo, target=measure(convo) - 100)
    assert record.method == "masking" and record.masked == [2]
    assert out[2]["content"] == ('[observation masked: terminal "cat src/a.py" -> 2,345 chars, first line "import os"; '
                                 're-run the command to see it]')
    assert convo[2]["content"].startswith("import os\nxxx"), "the input is not modified"


def test_masking_other_tools_say_call_again():
    convo = [{"role": "user", "content": "t"},
             {"role": "assistant", "content": None, "tool_calls": [call("r", "read_file", path="a.py")]},
             {"role": "tool", "tool_call_id": "r", "content": "y" * 1500}, *rounds(3)]
    out, _ = compact(convo, target=measure(convo) - 100)
    assert out[2]["content"].startswith('[observation masked: read_file "a.py" -> 1,500 chars')
    assert "call the tool again with the same arguments" in out[2]["content"]


def test_small_results_are_never_masked():
    """A result under MIN_MASK_CHARS saves a few tokens masked, and masking it would change the
    request from there on (a prompt cache re-reads all after it): it stays (issue 16)."""
    convo = [{"role": "user", "content": "t"}, *rounds(6, chars=MIN_MASK_CHARS - 1), *rounds(6, start=6)]
    out, masked = mask_observations(convo, keep_recent=0)
    assert [convo[i]["tool_call_id"] for i in masked] == [f"call_{i}" for i in range(6, 12)]
    out, record = compact(convo, target=1, limit=100_000, summary=False)
    assert record.masked == [14, 16, 18] and out[:14] == convo[:14]


def test_masking_masks_oldest_first_only_as_far_as_the_target_needs():
    convo = [{"role": "user", "content": "t"}, *rounds(10)]
    before = measure(convo)
    one = measure(convo) - measure(mask_observations(convo[:3], keep_recent=0)[0] + convo[3:])
    out, record = compact(convo, target=before - one - 1)  # a little more than one result saves
    assert record.method == "masking" and record.masked == [2, 4], "the two oldest, no more"
    assert out[5:] == convo[5:] and record.tokens_after <= before - 600
    out, record = compact(convo, target=before - 6_000, limit=100_000, summary=False)
    assert record.masked == [2, 4, 6, 8, 10, 12, 14], "all but the 3 newest when the target needs them all"


@pytest.mark.parametrize("keep", [0, 1, 3, 10])
def test_masking_keeps_the_k_most_recent_results(keep):
    convo = [{"role": "user", "content": "t"}, *rounds(6, reasoning=True)]
    out, masked = mask_observations(convo, keep_recent=keep)
    results = [m for m in out if m["role"] == "tool"]
    intact = [m for m in results if not m["content"].startswith("[observation masked:")]
    assert len(intact) == min(keep, 6) and results[-len(intact):] == intact if intact else True
    assert len(masked) == 6 - min(keep, 6)
    assert is_valid_pairing(out)
    assert all(m.get("reasoning_content") for m in out if m["role"] == "assistant")
    again, second = mask_observations(out, keep_recent=keep)
    assert again == out and second == [], "masking is idempotent"


def test_short_results_are_not_masked():
    convo = [{"role": "user", "content": "t"}, *rounds(5, chars=50)]
    out, record = compact(convo, target=100_000, config=CompactionConfig(keep_tool_results=0))
    assert out == convo and record.masked == []


# -- case C03 --------------------------------------------------------------------

def _assert_task_and_request_kept(out: list[dict], last: str) -> None:
    assert out[0] == {"role": "user", "content": C03_TASK}, "the task is the first message, verbatim"
    assert out[-1] == {"role": "user", "content": last}, "the latest request is last, verbatim"
    assert tool_pairing_ok([SYSTEM, *out])


def test_C03_two_compactions_with_a_useless_summarizer():
    first, record1 = compact(c03_history(), summarize=lambda _m: USELESS)
    assert record1.method == "extractive" and "lacks the sections" in record1.summary_error
    _assert_task_and_request_kept(first, C03_LAST)
    later = first + rounds(10, start=100, prefix="later") + [{"role": "user", "content": "Then run the tests."}]
    second, record2 = compact(later, summarize=lambda _m: USELESS, force=True)
    _assert_task_and_request_kept(second, "Then run the tests.")
    text = summary_of(second)
    assert USELESS not in text
    assert C03_LAST in text, "the first compaction's kept request is quoted in the second summary"
    assert "cat src/mod" in text and text.count("## ") == len(SECTIONS)
    assert "v9-TEST" in "".join(m["content"] or "" for m in second if m["role"] == "user")
    assert record2.tokens_after < record2.tokens_before


def test_C03_compacting_twice_in_a_row_keeps_the_earlier_summary():
    first, _ = compact(c03_history(), summarize=lambda _m: USELESS, force=True)
    second, record = compact(first, summarize=lambda _m: USELESS, force=True)
    assert record.method == "masking" and second == first, "nothing new: the summary is kept, not re-summarized"
    third, record = compact(first[:2] + rounds(6, start=70, prefix="n") + first[2:], force=True)
    assert record.method == "extractive"
    _assert_task_and_request_kept(third, C03_LAST)
    old, new = summary_of(first), summary_of(third)
    carried = [line for line in old.splitlines() if "(stated by user)" in line or "[command]" in line]
    assert carried and all(line in new for line in carried)
    assert new.count(SUMMARY_MARKER) == 1 and "Earlier summary" not in new


def test_C03_with_a_good_summarizer():
    out, record = compact(c03_history(), summarize=good_summarizer)
    assert record.method == "llm" and record.summary_error is None
    _assert_task_and_request_kept(out, C03_LAST)
    assert summary_of(out).startswith(SUMMARY_MARKER)
    assert "Patch every module" in summary_of(out)


@pytest.mark.parametrize("reply", ["", "   ", USELESS, "## Goal\n- x", "I cannot help with that."])
def test_useless_summaries_fall_back_to_extractive(reply):
    out, record = compact(c03_history(), summarize=lambda _m: reply)
    assert record.method == "extractive" and record.summary_error
    assert "cat src/mod" in summary_of(out)
    assert not reply.strip() or reply.strip() not in summary_of(out)


def test_a_failing_summary_call_falls_back_to_extractive():
    def broken(_messages):
        raise TimeoutError("model timed out")

    out, record = compact(c03_history(), summarize=broken)
    assert record.method == "extractive" and "TimeoutError: model timed out" in record.summary_error
    _assert_task_and_request_kept(out, C03_LAST)


def test_user_facts_missing_from_an_llm_summary_are_put_back():
    history = c03_history(10)
    history[8:8] = [{"role": "user", "content": "The ticket is CFG-4411; deploy to port 8443 on branch feat/cfg-rename."},
                    {"role": "assistant", "content": "Noted."}]
    out, record = compact(history, summarize=good_summarizer, force=True,
                          config=CompactionConfig(keep_messages=1))
    assert record.method == "llm"
    text = summary_of(out)
    for fact in ("CFG-4411", "port 8443", "feat/cfg-rename"):
        assert fact in text


def test_facts_stated_mid_session_survive_two_extractive_compactions():
    history = c03_history(12)
    history[10:10] = [{"role": "user", "content": "Use the staging DB id ORD-7781 and timeout=45s."}]
    first, _ = compact(history, force=True)
    second, _ = compact(first + rounds(8, start=50, prefix="b") + [{"role": "user", "content": "go on"}], force=True)
    text = summary_of(second)
    assert "ORD-7781" in text and "timeout=45s" in text


# -- structure and invariants -----------------------------------------------------

def test_latest_user_message_mid_turn_is_kept_before_the_summary():
    history = [{"role": "user", "content": C03_TASK}, *rounds(5),
               {"role": "user", "content": "Now fix the tests."}, *rounds(30, start=10)]
    out, record = compact(history, force=True)
    assert [m["role"] for m in out[:3]] == ["user", "user", "user"]
    assert out[1]["content"] == "Now fix the tests." and is_summary_message(out[2])
    assert out[3]["role"] == "assistant" and tool_pairing_ok([SYSTEM, *out])
    assert record.dropped and all(i not in record.dropped for i in (0, 11))


def test_record_lists_what_was_dropped():
    history = c03_history(20)
    out, record = compact(history, force=True)
    dropped_ids = {history[i].get("tool_call_id") for i in record.dropped if history[i]["role"] == "tool"}
    assert set(record.dropped_tool_call_ids) == dropped_ids and dropped_ids
    assert record.messages_before == len(history) and record.messages_after == len(out)
    assert record.tokens_after == measure(out) < record.tokens_before
    assert record.to_dict()["method"] == "extractive"


@pytest.mark.parametrize("keep", [1, 2, 3, 4, 5, 6])
def test_C01_compaction_path_keeping_the_last_messages(keep):
    history = [{"role": "user", "content": "List the repo."},
               {"role": "assistant", "content": None, "tool_calls": [call("call_1", command="ls")]},
               {"role": "tool", "tool_call_id": "call_1", "content": "a.py\nb.py\nmain.py\n" * 210},
               {"role": "assistant", "content": "There are 3 files."},
               {"role": "user", "content": "Now read main.py"}]
    out, _ = compact(history, target=50, limit=20_000, force=True, config=CompactionConfig(keep_messages=keep))
    assert tool_pairing_ok([SYSTEM, *out])
    assert out[-min(keep, 4):] == history[-min(keep, 4):] if keep != 3 else out[-2:] == history[-2:]
    assert out[0] == history[0] and out[-1] == history[-1]
    ids = [m.get("tool_call_id") for m in out if m["role"] == "tool"]
    calls = [c["id"] for m in out for c in m.get("tool_calls") or []]
    assert ids == calls, "a call and its result are kept or dropped together"


def test_C06_compaction_keeps_reasoning_content_of_the_current_turn():
    history = [{"role": "user", "content": C03_TASK}, *rounds(30, reasoning=True)]
    out, record = compact(history, force=True)
    assert record.method == "extractive"
    kept = [m for m in out if m["role"] == "assistant"]
    assert kept, "the tail keeps the latest units"
    originals = {m["tool_calls"][0]["id"]: m for m in history if m["role"] == "assistant"}
    for message in kept:
        assert message["reasoning_content"] == originals[message["tool_calls"][0]["id"]]["reasoning_content"]


def test_summary_stays_within_its_token_cap():
    out, _ = compact(c03_history(60), target=1200, limit=2400, force=True,
                     config=CompactionConfig(summary_max_tokens=300))
    assert COUNTER.count(summary_of(out)) <= 300 + 20  # the marker line is outside the cap


@pytest.mark.parametrize("field, value", [("trigger_ratio", 1.5), ("trigger_ratio", 0), ("keep_tool_results", -1),
                                          ("summary_max_tokens", 10), ("keep_messages", 0), ("tail_ratio", "x")])
def test_invalid_config_names_the_setting(field, value):
    with pytest.raises(ConfigError, match=f"context.compaction_{field}"):
        CompactionConfig(**{field: value})


def test_config_from_settings_reads_prefixed_keys():
    class Ctx:
        compaction_trigger_ratio = 0.7
        compaction_keep_tool_results = 5

    config = CompactionConfig.from_settings(Ctx())
    assert (config.trigger_ratio, config.keep_tool_results, config.target_ratio) == (0.7, 5, 0.6)
