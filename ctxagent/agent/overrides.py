"""Change the model or the tools of a running agent: for the next turns, or for one turn.

`switch_model(agent, name)` points every part that asks the model at `name`: the client
(which the plan tool and compaction summaries share through their wrappers), the agent's
settings (the budget of each request reads the window from them) and the assembler (its
token counter and snapshots). The endpoint, key and prices stay; the context window and
output limit follow the provider preset that lists `name` as its model, unless they were
set on purpose (config, environment, flag). `turn_overrides` does either for one turn only.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator

from ctxagent.config.settings import LOCAL_PROVIDER
from ctxagent.errors import ConfigError
from ctxagent.llm.presets import PRESETS
from ctxagent.llm.settings import ModelSettings
from ctxagent.text.tokens import TokenCounter
from ctxagent.tools.base import ToolRegistry

_LIMITS = ("context_window", "max_output_tokens")


@dataclass(frozen=True)
class ModelChange:
    """What `switch_model` did: the settings `before` and `after`, and `limits_from` (the preset
    whose window and output limit were taken, or None when they were kept)."""

    before: ModelSettings
    after: ModelSettings
    limits_from: str | None


def model_settings_for(settings: Any, name: str) -> tuple[ModelSettings, str | None]:
    """`settings.model` with model `name`, and the preset whose limits it took (or None).
    Raises ConfigError for an empty name, one with white space, or the offline model."""
    name = name.strip()
    if not name or any(c.isspace() for c in name):
        raise ConfigError(f"model name {name!r}: give one name without spaces, e.g. /model gpt-4o-mini")
    current: ModelSettings = settings.model
    if current.provider == LOCAL_PROVIDER:
        raise ConfigError("the offline local model serves one model; choose another provider to switch models")
    update: dict[str, Any] = {"model": name}
    preset = next((p for p, data in PRESETS.items() if data["model"] == name), None)
    chosen = [k for k in _LIMITS if not str(settings.sources.get(f"model.{k}", "preset")).startswith("preset")]
    if preset is not None and not chosen:
        update.update({k: PRESETS[preset][k] for k in _LIMITS})
    else:
        preset = None
    return current.replace(**update), preset


def switch_model(agent: Any, name: str) -> ModelChange:
    """Make `agent`'s next model calls use model `name` (see the module doc). Raises ConfigError."""
    before = agent.settings.model
    after, preset = model_settings_for(agent.settings, name)
    apply_model(agent, after, source="/model in chat")
    return ModelChange(before=before, after=after, limits_from=preset)


def apply_model(agent: Any, model: ModelSettings, *, source: str) -> None:
    """Install `model` in `agent`'s client, settings and assembler; `source` goes to settings.sources."""
    if hasattr(agent.client, "settings"):
        agent.client.settings = model
    sources = {**agent.settings.sources, "model.model": source}
    agent.settings = agent.settings.replace(model=model, sources=sources)
    assembler = agent.assembler
    if hasattr(assembler, "model"):
        assembler.model = model
    if hasattr(assembler, "counter"):
        assembler.counter = TokenCounter(model.model)


def restricted_registry(registry: ToolRegistry, allowed: dict[str, Any]) -> ToolRegistry:
    """A registry of `registry`'s tools named in `allowed` (name -> the tool to offer in its
    place, or None for the tool itself), in `registry`'s order."""
    sub = ToolRegistry()
    for tool in registry:
        if tool.name in allowed:
            sub.register(allowed[tool.name] or tool)
    return sub


@contextlib.contextmanager
def turn_overrides(agent: Any, *, model: str | None = None, tools: dict[str, Any] | None = None) -> Iterator[None]:
    """Run the block with model `model` and only the tools in `tools` (see `restricted_registry`),
    then put the agent's own model and tools back, whatever happens. Raises ConfigError."""
    saved_settings, saved_registry = agent.settings, agent.registry
    saved_client = getattr(agent.client, "settings", None)
    try:
        if model:
            apply_model(agent, model_settings_for(agent.settings, model)[0], source="a custom command's front matter")
        if tools is not None:
            agent.registry = agent.runner.registry = restricted_registry(saved_registry, tools)
        yield
    finally:
        agent.registry = agent.runner.registry = saved_registry
        if model:
            apply_model(agent, saved_settings.model, source=saved_settings.sources.get("model.model", "default"))
            agent.settings = saved_settings
            if saved_client is not None:
                agent.client.settings = saved_client
