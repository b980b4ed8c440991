"""`/model [NAME]`: show the model, or switch to NAME for the next turns and say what changes."""

from __future__ import annotations

from typing import Any, Callable

from ctxagent.agent.overrides import ModelChange, switch_model
from ctxagent.cli.slash.context import ChatContext
from ctxagent.cli.wrap import soft
from ctxagent.errors import CtxAgentError
from ctxagent.llm.prices import prices_for
from ctxagent.llm.settings import ModelSettings
from ctxagent.text.tokens import TokenCounter


def prices(model: ModelSettings) -> str:
    """`$in, $cached, $out per million tokens (source)`, or that none are known."""
    found = prices_for(model)
    return "none known (cost is not counted)" if found is None else found.describe()


def describe_model(model: ModelSettings) -> list[str]:
    """The lines `/model` shows for the current model."""
    return [f"model {model.model} (provider {model.provider})",
            f"  context window {model.context_window:,} tokens, replies up to {model.max_output_tokens:,}",
            f"  prices: {prices(model)}"]


def describe_change(change: ModelChange, history_tokens: int) -> list[str]:
    """The lines `/model NAME` shows: what the switch changes and what it keeps."""
    old, new = change.before, change.after
    source = (f"preset {change.limits_from}" if change.limits_from else
              f"kept: no preset lists {new.model}, or the limits were set on purpose; set model.context_window "
              "in config.toml if they differ")
    lines = [f"model {old.model} -> {new.model} for the next turns (same endpoint and key, provider {new.provider})",
             f"  context window {old.context_window:,} -> {new.context_window:,} tokens ({source})",
             f"  replies up to {old.max_output_tokens:,} -> {new.max_output_tokens:,} tokens"]
    own = prices_for(old)
    if own is not None and own.source == "settings":
        lines.append(f"  prices: kept at {prices(new)}; they were set for {old.model}, so set them for "
                     f"{new.model} in config.toml if they differ")
    elif prices_for(new) is None:
        lines.append("  prices: none set, so cost is still not counted (model.price_prompt_per_mtok, "
                     "model.price_cached_prompt_per_mtok, model.price_completion_per_mtok)")
    else:
        lines.append(f"  prices: {prices(new)}")
    room = new.context_window - new.max_output_tokens
    share = history_tokens / room if room > 0 else 1.0
    verdict = "fits" if share <= 1 else "does not fit: the next request compacts it"
    lines.append(f"  the conversation so far, about {history_tokens:,} tokens, {verdict} ({share:.0%} of the room "
                 "left beside the reply)")
    return lines


def history_tokens(agent: Any) -> int:
    """About how many tokens the system prompt, the history and the tools take for `agent`'s model."""
    messages = [{"role": "system", "content": agent.system}, *agent.session.history]
    return TokenCounter(agent.settings.model.model).count_messages(messages, agent.registry.schemas())


def _model(ctx: ChatContext, arg: str) -> None:
    if not arg:
        for line in describe_model(ctx.agent.settings.model):
            ctx.console.print(line, markup=False, soft_wrap=soft(ctx.console))
        ctx.console.print("  /model NAME switches the model for the next turns", markup=False)
        return
    try:
        change = switch_model(ctx.agent, arg)
    except CtxAgentError as exc:
        ctx.console.print(f"error: {exc}", style="red", markup=False, soft_wrap=soft(ctx.console))
        return
    for line in describe_change(change, history_tokens(ctx.agent)):
        ctx.console.print(line, markup=False, soft_wrap=soft(ctx.console))


def register_slash_commands(register: Callable[..., Any]) -> None:
    """Register /model."""
    register("model", "show the model, or switch to NAME for the next turns (window, prices)", _model, "[NAME]")
