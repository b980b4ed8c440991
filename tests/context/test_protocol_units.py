"""A long XML- or ReAct-protocol session through the context engine: masking and compaction
work on the native-form history, so every action and its observation stay one unit, and
the text the model reads never shows an observation without its action or the reverse."""

from __future__ import annotations

import pytest

from ctxagent.context.compaction.compactor import CompactionConfig
from ctxagent.context.messages import pairing_errors
from ctxagent.protocols import OBSERVATION_PREFIX, get_protocol
from ctxagent.protocols.base import violation_call
from tests.context.long_history import C03_TASK, rounds
from tests.context.test_layouts import STATE, SYSTEM, TOOLS, make, summarize


def xml_session(n: int) -> list[dict]:
    """A protocol session as the loop keeps it: the task, a broken reply and its correction,
    `n` rounds of terminal calls with big results (with thoughts), a final answer, a new request."""
    bad = violation_call("I will read the modules.", "the reply has no action")
    history = [SYSTEM, {"role": "user", "content": C03_TASK}, bad,
               {"role": "tool", "tool_call_id": bad["tool_calls"][0]["id"], "content": "Protocol error: one block."}]
    for message in rounds(n, chars=1500):
        if message["role"] == "assistant":
            message = {**message, "content": f"read {message['tool_calls'][0]['id']} next"}
        history.append(message)
    return [*history, {"role": "assistant", "content": "All modules read."},
            {"role": "user", "content": "Go on with the rename."}]


def assert_text_units(sent: list[dict], protocol: str) -> None:
    """Each action is followed by its observation, each observation follows an action."""
    action = "<tool " if protocol == "xml" else "Action: terminal["
    for i, message in enumerate(sent):
        text = str(message.get("content") or "")
        if message["role"] == "assistant" and action in text:
            after = sent[i + 1]
            assert after["role"] == "user" and after["content"].startswith(OBSERVATION_PREFIX), (i, after)
        if message["role"] == "user" and text.startswith(OBSERVATION_PREFIX):
            assert sent[i - 1]["role"] == "assistant" and action in sent[i - 1]["content"], (i, sent[i - 1])


@pytest.mark.parametrize("protocol", ["xml", "react"])
@pytest.mark.parametrize("how", ["masking", "summary"])
def test_masking_and_compaction_keep_actions_with_their_observations(protocol, how):
    ratio, extra = (0.6, {}) if how == "masking" else (0.3, {"summarize": summarize})
    assembler = make(config=CompactionConfig(target_ratio=ratio, tail_ratio=0.3), **extra)  # a tail with masked results
    request = assembler.assemble(xml_session(30 if how == "summary" else 12), TOOLS,
                                 {**STATE, "turn": 2, "protocol": protocol})
    method = request.report["compaction"]["method"]
    assert (method == "masking") == (how == "masking"), method
    assert not pairing_errors(request.messages[1:])
    sent, tools = get_protocol(protocol).encode(request.messages, TOOLS)
    assert tools is None
    assert_text_units(sent, protocol)
    observations = [m["content"] for m in sent if m["role"] == "user" and m["content"].startswith(OBSERVATION_PREFIX)]
    assert observations and any("[observation masked:" in o for o in observations)
    assert "Go on with the rename.\n\n[State]" in sent[-1]["content"], "the request, then the state last"
