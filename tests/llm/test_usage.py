"""Usage read from the stream (cached and reasoning tokens included) and its cost."""

from __future__ import annotations

import pytest

from ctxagent.llm.prices import Prices
from ctxagent.llm.usage import Usage, cache_savings_usd, cost_usd, usage_from_dict
from tests.llm.conftest import USER
from tests.support.fake_openai import text, tool_calls

OPENAI_USAGE = {"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500,
                "prompt_tokens_details": {"cached_tokens": 1024},
                "completion_tokens_details": {"reasoning_tokens": 200}}


def test_usage_with_cached_and_reasoning_tokens_and_cost(fake_openai, make_client):
    server = fake_openai([text("hi", usage=OPENAI_USAGE)])
    client = make_client(server, price_prompt_per_mtok=2.5, price_completion_per_mtok=10.0)
    usage = client.chat(USER).usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens,
            usage.reasoning_tokens) == (1200, 300, 1024, 200)
    assert usage.cost_usd == pytest.approx((1200 * 2.5 + 300 * 10.0) / 1e6)
    assert server.requests[0]["stream_options"] == {"include_usage": True}


def test_no_prices_means_no_cost(fake_openai, make_client):
    usage = make_client(fake_openai([text("hi", usage=OPENAI_USAGE)])).chat(USER).usage
    assert usage.cost_usd is None and usage.prompt_tokens == 1200


@pytest.mark.parametrize("usage", [None, {}, {"prompt_tokens": None}])
def test_server_without_usage_gives_zeros(fake_openai, make_client, usage):
    client = make_client(fake_openai([tool_calls([("ls", "{}")], usage=usage)]),
                         price_prompt_per_mtok=1.0)
    got = client.chat(USER).usage
    assert (got.prompt_tokens, got.completion_tokens, got.cached_tokens) == (0, 0, 0)
    assert got.cost_usd == 0.0


def test_deepseek_cache_hit_field_counts_as_cached():
    usage = usage_from_dict({"prompt_tokens": 100, "completion_tokens": 5,
                             "prompt_cache_hit_tokens": 64, "prompt_cache_miss_tokens": 36})
    assert usage.cached_tokens == 64


def test_malformed_usage_fields_become_zero():
    usage = usage_from_dict({"prompt_tokens": "lots", "completion_tokens": -3,
                             "prompt_tokens_details": None, "completion_tokens_details": None})
    assert usage == Usage()


def test_usage_adds_up_and_costs_combine():
    a = Usage(10, 2, 1, 0, None)
    b = Usage(5, 1, 0, 1, 0.25)
    total = a + b + Usage(1, 1, 0, 0, 0.5)
    assert (total.prompt_tokens, total.completion_tokens, total.cached_tokens,
            total.reasoning_tokens, total.total_tokens) == (16, 4, 1, 1, 20)
    assert total.cost_usd == pytest.approx(0.75)
    assert (a + Usage()).cost_usd is None
    assert sum([a, b], Usage()).prompt_tokens == 15


def test_cost_with_only_one_price(fake_openai, make_client):
    client = make_client(fake_openai([text("hi", usage={"prompt_tokens": 10**6, "completion_tokens": 10**6})]),
                         price_completion_per_mtok=2.0)
    assert client.chat(USER).usage.cost_usd == pytest.approx(2.0)
    assert cost_usd(Usage(1_000_000, 1_000_000), None) is None


def test_cached_tokens_are_billed_at_the_cache_price(fake_openai, make_client):
    server = fake_openai([text("hi", usage=OPENAI_USAGE)])
    client = make_client(server, price_prompt_per_mtok=2.5, price_cached_prompt_per_mtok=1.25,
                         price_completion_per_mtok=10.0)
    cost = client.chat(USER).usage.cost_usd
    assert cost == pytest.approx((176 * 2.5 + 1024 * 1.25 + 300 * 10.0) / 1e6)


def test_deepseek_hit_and_miss_cost_what_the_bill_says():
    """Issue 16: a DeepSeek bill with 90% cache hits, priced hit = a tenth of a miss."""
    usage = usage_from_dict({"prompt_cache_hit_tokens": 900_000, "prompt_cache_miss_tokens": 100_000,
                             "completion_tokens": 10_000})
    assert (usage.prompt_tokens, usage.cached_tokens) == (1_000_000, 900_000)
    prices = Prices(0.28, 0.028, 0.42, "test")
    assert cost_usd(usage, prices) == pytest.approx(0.1 * 0.28 + 0.9 * 0.028 + 0.01 * 0.42)
    assert cache_savings_usd(usage.cached_tokens, prices) == pytest.approx(0.9 * (0.28 - 0.028))


@pytest.mark.parametrize("data", ["text", ["list"], {"prompt_tokens": 5, "prompt_tokens_details": "x"}])
def test_usage_of_the_wrong_shape_is_read_safely(data):
    usage = usage_from_dict(data)
    assert usage.cached_tokens == 0 and usage.prompt_tokens in (0, 5)


def test_more_cached_than_prompt_tokens_never_makes_cost_negative():
    assert cost_usd(Usage(10, 0, 50), Prices(1.0, 0.1, 1.0, "test")) == pytest.approx(10 * 0.1 / 1e6)
