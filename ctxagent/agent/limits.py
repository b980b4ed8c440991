"""Per-turn limits (Settings.agent) and the exception that stops a turn.

Checked before every model call, so a turn that reaches a limit stops between calls,
with every tool call answered. Each limit has its own TurnEnd reason: max_steps,
max_tokens, max_cost (only when the model's prices are configured) and wall_time.
"""

from __future__ import annotations

from typing import Any

from ctxagent.llm.prices import prices_for
from ctxagent.llm.usage import Usage


class TurnStop(Exception):
    """Ends a turn early (loop control only, never shown as a traceback). `reason`: a TurnEnd reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def check_limits(agent: Any, *, steps: int, usage: Usage, elapsed_s: float) -> None:
    """Raise TurnStop when a limit of `agent` (AgentSettings) is reached; `elapsed_s` in seconds."""
    if steps >= agent.max_steps:
        raise TurnStop("max_steps", f"stopped after {steps} model calls (agent.max_steps = {agent.max_steps}); "
                       "raise it with --max-steps, or send a new message to continue")
    if usage.total_tokens >= agent.max_task_tokens:
        raise TurnStop("max_tokens", f"stopped after {usage.total_tokens:,} tokens "
                       f"(agent.max_task_tokens = {agent.max_task_tokens:,})")
    if usage.cost_usd is not None and usage.cost_usd >= agent.max_cost_usd:
        raise TurnStop("max_cost", f"stopped after ${usage.cost_usd:.4f} (agent.max_cost_usd = {agent.max_cost_usd})")
    if elapsed_s >= agent.wall_time_s:
        raise TurnStop("wall_time", f"stopped after {elapsed_s:.0f} s (agent.wall_time_s = {agent.wall_time_s:g})")


def limits_dict(agent: Any) -> dict[str, Any]:
    """The limits in force, for TurnEnd.limits."""
    return {"max_steps": agent.max_steps, "max_task_tokens": agent.max_task_tokens,
            "max_cost_usd": agent.max_cost_usd, "wall_time_s": agent.wall_time_s}


def cost_cap_line(agent: Any, model: Any) -> str:
    """One line for `ctxagent doctor`: whether `agent.max_cost_usd` can stop a turn with `model`
    (ModelSettings), and the prices it counts with, or that it is inactive for lack of prices."""
    prices = prices_for(model)
    cap = f"agent.max_cost_usd = {agent.max_cost_usd:g}"
    if model.model == "(none)":  # no provider configured (`load_settings(require_model=False)`)
        return "cost cap: no model configured yet"
    if prices is None:
        return (f"cost cap: inactive, no prices for model {model.model!r} (provider {model.provider}), so {cap} never "
                "stops a turn; set model.price_prompt_per_mtok, model.price_cached_prompt_per_mtok and "
                "model.price_completion_per_mtok (USD per million tokens) in config.toml")
    if (prices.input, prices.cached_input, prices.output) == (0, 0, 0):
        return f"cost cap: not needed, provider {model.provider} costs nothing per token ({prices.source})"
    return f"cost cap: {cap} per turn, counted at {prices.describe()}"
