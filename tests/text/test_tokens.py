"""Token counting: exact offline counts, the per-class estimate (C04), message rules, calibration."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ctxagent.text.tokens import (
    CALIBRATION_MAX,
    CALIBRATION_MIN,
    PER_CJK,
    TokenCounter,
    char_classes,
    encoding_for_model,
    estimate_tokens,
    exact_tokens,
)


# Token ids published in tiktoken's README / OpenAI cookbook: "hello world" -> [15339, 1917]
# (cl100k) and [24912, 2375] (o200k); "tiktoken is great!" -> 6 tokens in cl100k.
@pytest.mark.parametrize(
    "text, encoding, expected",
    [
        ("hello world", "cl100k_base", 2),
        ("hello world", "o200k_base", 2),
        ("tiktoken is great!", "cl100k_base", 6),
        ("你好世界", "cl100k_base", 5),
        ("你好世界", "o200k_base", 2),
        ("", "cl100k_base", 0),
    ],
)
def test_exact_counts_equal_known_values(text: str, encoding: str, expected: int) -> None:
    assert exact_tokens(text, encoding) == expected


def test_exact_counting_works_offline_in_a_fresh_process(tmp_path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TIKTOKEN_CACHE_DIR": str(tmp_path), "HOME": str(tmp_path),
           "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9"}
    code = "from ctxagent.text.tokens import TokenCounter; print(TokenCounter('gpt-4o').count('hello world'))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2"


@pytest.mark.parametrize(
    "model, encoding",
    [
        ("gpt-4o", "o200k_base"), ("gpt-4o-mini", "o200k_base"), ("openai/gpt-4.1-mini", "o200k_base"),
        ("o1-preview", "o200k_base"), ("o3-mini", "o200k_base"), ("o4-mini", "o200k_base"), ("gpt-5", "o200k_base"),
        ("gpt-4", "cl100k_base"), ("gpt-4-turbo", "cl100k_base"), ("gpt-3.5-turbo", "cl100k_base"),
        ("deepseek-chat", None), ("qwen-plus", None), ("llama3.1:8b", None), ("", None), (None, None),
    ],
)
def test_model_names_map_to_encodings(model: str | None, encoding: str | None) -> None:
    assert encoding_for_model(model) == encoding
    assert TokenCounter(model).exact is (encoding is not None)


def test_C04_cjk_is_counted_not_guessed() -> None:
    text = "你好世界" * 2500
    assert TokenCounter("deepseek-chat").count(text) >= 10_000
    assert TokenCounter().count(text) >= 10_000
    assert TokenCounter("gpt-4").count(text) == 12_500  # exact cl100k


def test_C04_mixed_text_weighted_per_character_class() -> None:
    ascii_part = ("word " * 1000)  # 5,000 ASCII characters
    mixed = ascii_part + "数据" * 1000  # + 2,000 CJK characters
    alnum, punct, space, cjk, other = char_classes(mixed)
    assert (alnum, space, cjk, other) == (4000, 1000, 2000, 0)
    est = estimate_tokens(mixed)
    assert abs(est - (estimate_tokens(ascii_part) + estimate_tokens("数据" * 1000))) <= 1
    assert estimate_tokens("数据" * 1000) == round(2000 * PER_CJK)
    # a characters/4 rule would give 1,750 tokens; CJK must weigh more than ASCII
    assert est > 2000 + 1000


@pytest.mark.parametrize("text", ["def parse_cfg(path):\n    return path\n" * 50, "The quick brown fox. " * 100, "Ünïcödé ✓ — ok " * 40])
def test_estimate_is_within_a_factor_of_two_of_cl100k(text: str) -> None:
    exact = exact_tokens(text, "cl100k_base")
    assert exact / 2 <= estimate_tokens(text) <= exact * 2


def test_count_message_follows_the_cookbook_rule() -> None:
    counter = TokenCounter("gpt-4")
    # 3 per message + "user" (1) + "hello world" (2), + 3 for the reply primer
    assert counter.count_messages([{"role": "user", "content": "hello world"}]) == 9
    named = counter.count_message({"role": "user", "content": "hello world", "name": "bob"})
    assert named == 3 + 1 + 2 + counter.count("bob") + 1


def test_tool_calls_reasoning_and_parts_are_counted() -> None:
    counter = TokenCounter("gpt-4o")
    bare = counter.count_message({"role": "assistant", "content": None})
    call = {"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": json.dumps({"command": "ls -la"})}}
    with_call = counter.count_message({"role": "assistant", "content": None, "tool_calls": [call]})
    assert with_call > bare + counter.count("terminal") + counter.count(call["function"]["arguments"])
    reasoning = counter.count_message({"role": "assistant", "content": "ok", "reasoning_content": "think " * 50})
    assert reasoning >= 50
    parts = counter.count_message({"role": "user", "content": [{"type": "text", "text": "hello world"}]})
    assert parts == counter.count_message({"role": "user", "content": "hello world"})


def test_tool_schemas_are_counted() -> None:
    counter = TokenCounter("gpt-4o")
    tools = [{"type": "function", "function": {"name": "terminal", "description": "Run a read-only command " * 5,
                                               "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]
    messages = [{"role": "user", "content": "hi"}]
    with_tools = counter.count_messages(messages, tools)
    assert with_tools - counter.count_messages(messages) == counter.count_tools(tools) > 30
    assert counter.count_tools(None) == counter.count_tools([]) == 0


def test_observe_calibrates_estimates_within_bounds() -> None:
    counter = TokenCounter("deepseek-chat")
    text = "hello world " * 100
    before = counter.count(text)
    factor = counter.observe(before, before * 3)
    assert 1.0 < factor <= CALIBRATION_MAX
    assert counter.count(text) > before
    for _ in range(30):
        counter.observe(counter.count(text), 1)
    assert counter.factor == CALIBRATION_MIN
    for _ in range(30):
        counter.observe(counter.count(text), 10**9)
    assert counter.factor == CALIBRATION_MAX


def test_observe_ignores_exact_counters_and_nonsense() -> None:
    exact = TokenCounter("gpt-4o")
    assert exact.observe(100, 300) == 1.0
    estimating = TokenCounter()
    assert estimating.observe(0, 100) == 1.0
    assert estimating.observe(100, 0) == 1.0
    assert estimating.observe(-5, 100) == 1.0


def test_empty_and_none_count_zero() -> None:
    assert TokenCounter().count("") == TokenCounter().count(None) == 0
    assert estimate_tokens("a") == 1


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4"])
def test_lone_surrogates_are_counted_not_raised(model: str) -> None:
    """Text read with surrogateescape (bytes that were not UTF-8) holds lone surrogates,
    which the exact tokenizer cannot encode: they count as their escapes, at least as many
    tokens as a replacement character, and a build with them keeps its budget."""
    from ctxagent.context import ContextBuilder, ContextConfig, ContextPacket

    counter = TokenCounter(model)
    text = "caf\udce9 au lait \ud800"
    assert counter.count(text) >= counter.count("caf\ufffd au lait \ufffd")
    builder = ContextBuilder(config=ContextConfig(max_tokens=2000), model=model)
    packets = [ContextPacket(f"note {i}: caf\udce9 \ud83d budget", metadata={"type": "note"}) for i in range(30)]
    messages, report = builder.build_messages("why caf\udce9 budget?", None, "You are a coding agent.", packets)
    assert report["budget"]["used_tokens"] <= report["budget"]["input_budget"]
    assert "why caf\udce9 budget?" in messages[-1]["content"]
