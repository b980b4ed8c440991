"""The shipped price table (issue 15, item 13): dated, sourced, covering every hosted preset's default model."""

from __future__ import annotations

import datetime

import pytest

from ctxagent.llm.presets import PRESETS
from ctxagent.llm.prices import price_table, prices_for
from ctxagent.llm.settings import ModelSettings


def test_the_table_is_dated_and_names_a_source_per_provider():
    table = price_table()
    datetime.date.fromisoformat(table["taken"])
    assert "USD" in table["unit"]
    for name, provider in table["providers"].items():
        assert provider["source"], name
        for model, row in provider["models"].items():
            assert set(row) == {"input", "cached_input", "output"}, (name, model)
            assert 0 <= row["cached_input"] <= row["input"], (name, model)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_presets_default_model_has_prices(name):
    settings = ModelSettings(provider=name, model=PRESETS[name]["model"])
    prices = prices_for(settings)
    assert prices is not None and "prices.json" in prices.source
    if PRESETS[name]["needs_key"]:  # hosted: a real price, and the cache costs less
        assert prices.input > 0 and prices.output > 0 and prices.cached_input < prices.input
    else:  # a server on your machine costs nothing per token
        assert (prices.input, prices.cached_input, prices.output) == (0, 0, 0)


def test_deepseek_default_model_prices():
    prices = prices_for(ModelSettings(provider="deepseek", model="deepseek-chat"))
    assert (prices.input, prices.cached_input, prices.output) == (0.28, 0.028, 0.42)


def test_settings_win_and_a_missing_cache_price_is_the_prompt_price():
    prices = prices_for(ModelSettings(provider="openai", model="gpt-4o-mini", price_prompt_per_mtok=3.0))
    assert (prices.input, prices.cached_input, prices.output, prices.source) == (3.0, 3.0, 0.0, "settings")


@pytest.mark.parametrize("provider, model", [("custom", "gpt-4o-mini"), ("openai", "my-fine-tune"),
                                             ("deepseek", "deepseek-chat-v9")])
def test_no_prices_for_a_model_the_table_does_not_list(provider, model):
    assert prices_for(ModelSettings(provider=provider, model=model, base_url="http://127.0.0.1:9/v1")) is None
