"""`/usage` and `/cost`: tokens in and out, cache hits and cost of the session so far.

Read from the session's transcript: every model call (the loop's, and the side calls of
the plan tool and of compaction summaries) is recorded as a `usage` event, and each loop
call's reply as a message with its usage. Cost is what the bill says (cached tokens at the
cache price) and needs the model's prices (`ctxagent.llm.prices`: settings, else the shipped
table); without them it says so. The cache's saving is shown at the current prices.
"""

from __future__ import annotations

from typing import Any, Callable

from ctxagent.cli.slash.context import ChatContext
from ctxagent.cli.wrap import soft
from ctxagent.llm.prices import prices_for
from ctxagent.llm.usage import cache_savings_usd
from ctxagent.storage.files import read_jsonl

_FIELDS = ("prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens")


def session_usage(agent: Any) -> dict[str, Any]:
    """{"turns", "loop_calls", prompt/completion/cached/reasoning tokens, "cost_usd" (None
    when no call had a price), "side_tokens"} for `agent`'s session, from its transcript."""
    path = agent.session.path
    records = read_jsonl(path) if path.exists() else []
    total: dict[str, Any] = dict.fromkeys(_FIELDS, 0)
    total["cost_usd"] = None
    for record in records:
        event = record.get("event") if record.get("kind") == "event" else None
        if not isinstance(event, dict) or event.get("type") != "usage":
            continue
        for key in _FIELDS:
            total[key] += int(event.get(key) or 0)
        if event.get("cost_usd") is not None:
            total["cost_usd"] = (total["cost_usd"] or 0.0) + float(event["cost_usd"])
    loop = [r["usage"] for r in records if r.get("kind") == "message" and isinstance(r.get("usage"), dict)]
    loop_tokens = sum(int(u.get("prompt_tokens") or 0) + int(u.get("completion_tokens") or 0) for u in loop)
    total.update(turns=agent.session.turns, loop_calls=len(loop),
                 side_tokens=max(0, total["prompt_tokens"] + total["completion_tokens"] - loop_tokens))
    return total


def usage_lines(agent: Any, total: dict[str, Any]) -> list[str]:
    """The lines /usage prints for `total` (from `session_usage`)."""
    lines = [f"session {agent.session.id}: {total['turns']} turns, {total['loop_calls']} model calls by the loop",
             f"  tokens in   {total['prompt_tokens']:,} ({cache_share(total)})",
             f"  tokens out  {total['completion_tokens']:,} (reasoning {total['reasoning_tokens']:,})"]
    if total["side_tokens"]:
        lines.append(f"  of these, {total['side_tokens']:,} tokens went to side calls (plan tool, compaction summaries)")
    lines.append("  " + cost_line(agent, total))
    return lines


def cache_share(total: dict[str, Any]) -> str:
    """`cache hits 900 of them, 90% of input` for `total`'s prompt and cached tokens."""
    prompt, cached = total["prompt_tokens"], total["cached_tokens"]
    share = f", {cached / prompt:.0%} of input" if prompt else ""
    return f"cache hits {cached:,}{share}"


def cost_line(agent: Any, total: dict[str, Any]) -> str:
    """`cost so far $X, the cache saved $Y (prices ...)`, or why the cost is unknown. The cost is
    what each call was billed (cached tokens at the cache price); the saving is at today's prices."""
    model = agent.settings.model
    prices = prices_for(model)
    if total["cost_usd"] is None:
        if prices is None:
            return (f"cost unknown: no prices set for {model.model} (set model.price_prompt_per_mtok, "
                    "model.price_cached_prompt_per_mtok and model.price_completion_per_mtok, USD per million tokens, "
                    "in config.toml)")
        return "cost so far $0.0000"
    saved = cache_savings_usd(total["cached_tokens"], prices)
    saving = f", the cache saved ${saved:.4f}" if saved else ""
    shown = f" (prices now {prices.describe()})" if prices is not None else ""
    return f"cost so far ${total['cost_usd']:.4f}{saving}{shown}"


def _usage(ctx: ChatContext, arg: str) -> None:
    for line in usage_lines(ctx.agent, session_usage(ctx.agent)):
        ctx.console.print(line, markup=False, soft_wrap=soft(ctx.console))


def _cost(ctx: ChatContext, arg: str) -> None:
    total = session_usage(ctx.agent)
    ctx.console.print(cost_line(ctx.agent, total), markup=False, soft_wrap=soft(ctx.console))
    ctx.console.print(f"  {total['prompt_tokens']:,} tokens in ({cache_share(total)}), "
                      f"{total['completion_tokens']:,} out, over {total['turns']} turns", markup=False)


def register_slash_commands(register: Callable[..., Any]) -> None:
    """Register /cost and /usage."""
    register("cost", "cost of the session so far, with the tokens behind it", _cost)
    register("usage", "tokens in and out, cache hits, side calls and cost of this session", _usage)
