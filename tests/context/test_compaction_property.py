"""Property: for random long histories the assembled request keeps the pairing valid,
the task and the latest request verbatim, and fits the budget, or the irreducible part
really does not fit and ContextOverflowError says so (issue 4, "Done means")."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxagent.context.assembler import ContextAssembler
from ctxagent.context.compaction.compactor import NothingToCompact
from ctxagent.context.messages import history_units, truncate_tool_result
from ctxagent.errors import ContextOverflowError
from ctxagent.llm.settings import ModelSettings
from ctxagent.text.tokens import TokenCounter
from tests.context.long_history import add_step, tool_pairing_ok

COUNTER = TokenCounter("gpt-4o-mini")
SYSTEM = {"role": "system", "content": "You are ctxagent, a coding agent."}
TOOLS = [{"type": "function", "function": {"name": "terminal", "description": "Run a command.",
                                           "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]
WORDS = ("parse_cfg src/app.py v9-TEST the config loader returns 8443 error: KeyError 'port' "
         "def class import 日志 配置 fixed tests pass ORD-7781 timeout=30s").split()


def words(seed: int, n: int) -> str:
    return " ".join(WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(n))


step = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 120), st.integers(0, 99)),
    st.tuples(st.just("text"), st.integers(1, 200), st.integers(0, 99)),
    st.tuples(st.just("calls"), st.lists(st.integers(0, 6000), min_size=1, max_size=3), st.booleans()),
)


def build(task_words: int, steps: list) -> list[dict]:
    history = [SYSTEM, {"role": "user", "content": "Task: " + words(1, task_words)}]
    for n, step in enumerate(steps):
        add_step(history, n, step, words)
    return history


def irreducible(history: list[dict]) -> int:
    """Lower bound of what must be sent: system, task, latest request, last unit (results cut)."""
    convo = history[1:]
    users = [m for m in convo if m["role"] == "user"]
    last_unit = [dict(m, content=truncate_tool_result(m["content"], 200)) if m["role"] == "tool" else m
                 for m in history_units(convo)[-1]]
    must = [SYSTEM, users[0], *([users[-1]] if users[-1] is not users[0] else [])]
    must += [m for m in last_unit if m is not users[-1] and m is not users[0]]
    return COUNTER.count_messages(must, TOOLS)


def check(history: list[dict], request, limit: int) -> None:
    messages = request.messages
    users = [m for m in history if m["role"] == "user"]
    assert tool_pairing_ok(messages)
    assert messages[1] == users[0], "the task is the first message after the system prompt"
    assert users[-1] in messages, "the latest request is sent verbatim"
    if history[-1]["role"] == "user":
        assert messages[-1] == history[-1]
    assert COUNTER.count_messages(messages, TOOLS) <= limit


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(task_words=st.integers(1, 150), steps=st.lists(step, min_size=8, max_size=50),
       window=st.sampled_from([1500, 3000, 6000, 12000]), output=st.sampled_from([200, 500, 1000]),
       turn=st.integers(1, 3))
def test_assembled_requests_keep_the_invariants(task_words, steps, window, output, turn):
    history = build(task_words, steps)
    assembler = ContextAssembler(ModelSettings(model="gpt-4o-mini", context_window=window, max_output_tokens=output),
                                 counter=COUNTER, snapshots=False, load_state=None)
    limit = assembler.budget()["limit"]
    try:
        request = assembler.assemble(history, TOOLS, {"turn": turn})
    except ContextOverflowError:
        assert irreducible(history) > limit * 0.8
        return
    check(history, request, limit)
    try:
        compacted = assembler.compact(history, trigger="manual")
    except NothingToCompact:  # all of it is in the verbatim tail or in the summary just made
        assert assembler.records == [] or assembler.records[-1].trigger == "auto"
        return
    assert assembler.last_record.trigger == "manual" and assembler.last_record.dropped, "a manual one summarizes"
    assert tool_pairing_ok(compacted) and compacted[1] == history[1]
    try:
        again = assembler.assemble(compacted + [{"role": "user", "content": "next"}], TOOLS, {"turn": turn + 1})
    except ContextOverflowError:
        return
    check(compacted + [{"role": "user", "content": "next"}], again, limit)
