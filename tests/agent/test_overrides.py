"""Switching a running agent's model, and one turn with another model and fewer tools."""

from __future__ import annotations

import pytest

from ctxagent.agent.overrides import model_settings_for, switch_model, turn_overrides
from ctxagent.config.settings import Settings
from ctxagent.errors import ConfigError
from ctxagent.llm.settings import ModelSettings
from tests.support.fake_openai import text, tool_calls


def test_switch_reaches_the_next_request_and_takes_a_preset_window(make_agent) -> None:
    agent, server, _ = make_agent([text("a"), text("b")])
    agent.run_turn("one")
    change = switch_model(agent, "deepseek-chat")
    agent.run_turn("two")
    assert [r["model"] for r in server.requests] == ["fake-model", "deepseek-chat"]
    assert (change.before.model, change.after.model, change.limits_from) == ("fake-model", "deepseek-chat", "deepseek")
    assert agent.settings.model.context_window == 128_000 and agent.settings.model.max_output_tokens == 8192
    assert agent.settings.sources["model.model"] == "/model in chat"


def test_limits_set_on_purpose_are_kept() -> None:
    settings = Settings(model=ModelSettings(provider="custom", model="m", context_window=9000, max_output_tokens=900),
                        sources={"model.context_window": "/home/u/.config/ctxagent/config.toml"})
    model, preset = model_settings_for(settings, "qwen-plus")
    assert (model.model, model.context_window, model.max_output_tokens, preset) == ("qwen-plus", 9000, 900, None)


@pytest.mark.parametrize(("provider", "name", "why"), [
    ("custom", "", "give one name without spaces"), ("custom", "two words", "give one name without spaces"),
    ("local", "other", "the offline local model serves one model"),
])
def test_bad_switches_are_refused(provider: str, name: str, why: str) -> None:
    settings = Settings(model=ModelSettings(provider=provider, model="m"))
    with pytest.raises(ConfigError, match=why):
        model_settings_for(settings, name)


def test_turn_overrides_put_model_and_tools_back_even_after_an_error(make_agent) -> None:
    agent, server, _ = make_agent([tool_calls([("change", '{"path": "x"}')]), text("refused"), text("back")])
    registry, runner_registry = agent.registry, agent.runner.registry
    with turn_overrides(agent, model="other-model", tools={"echo": None}):
        agent.run_turn("only echo")
    with pytest.raises(RuntimeError), turn_overrides(agent, model="third", tools={}):
        raise RuntimeError("boom")
    agent.run_turn("again")
    first, second, third = server.requests
    assert first["model"] == second["model"] == "other-model" and third["model"] == "fake-model"
    assert [t["function"]["name"] for t in first["tools"]] == ["echo"]
    assert second["messages"][-1]["content"].startswith('Error: there is no tool named "change". Available tools: echo.')
    assert len(third["tools"]) == 4
    assert agent.registry is registry and agent.runner.registry is runner_registry
    assert agent.settings.model.model == agent.client.settings.model == "fake-model"
