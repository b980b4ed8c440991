"""Token usage of model calls and its cost as billed.

Read from a completion's `usage` (the last stream chunk with `stream_options.include_usage`), in
tokens: prompt_tokens, completion_tokens; cached_tokens (`prompt_tokens_details.cached_tokens` of
OpenAI, Qwen, vLLM, or DeepSeek's `prompt_cache_hit_tokens`), part of prompt_tokens;
reasoning_tokens (`completion_tokens_details.reasoning_tokens`), part of completion_tokens. No
usage gives zeros. Cost is USD as the bill says it: cached prompt tokens at the cache price
(`ctxagent.llm.prices`; None when no price is known).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from ctxagent.llm.prices import Prices


@dataclass
class Usage:
    """Tokens used by one model call, or by several added together (`a + b`)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        costs = [c for c in (self.cost_usd, other.cost_usd) if c is not None]
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cost_usd=sum(costs) if costs else None,
        )

    @property
    def total_tokens(self) -> int:
        """prompt_tokens + completion_tokens."""
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, for transcripts and the usage event."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cost_usd": self.cost_usd,
        }


def usage_from_dict(data: Mapping[str, Any] | None) -> Usage:
    """Usage from a completion's `usage` mapping; None, missing or malformed fields -> 0.
    DeepSeek's `prompt_cache_hit_tokens` + `prompt_cache_miss_tokens` stand in for a missing
    prompt_tokens."""
    if not isinstance(data, Mapping) or not data:
        return Usage()
    prompt_details = _mapping(data.get("prompt_tokens_details"))
    completion_details = _mapping(data.get("completion_tokens_details"))
    hit, miss = _int(data.get("prompt_cache_hit_tokens")), _int(data.get("prompt_cache_miss_tokens"))
    cached = _int(prompt_details.get("cached_tokens")) or hit
    return Usage(
        prompt_tokens=_int(data.get("prompt_tokens")) or hit + miss,
        completion_tokens=_int(data.get("completion_tokens")),
        cached_tokens=cached,
        reasoning_tokens=_int(completion_details.get("reasoning_tokens")),
    )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int(value: Any) -> int:
    try:
        return max(0, int(value)) if value is not None else 0
    except (TypeError, ValueError):
        return 0


def cost_usd(usage: Usage, prices: Prices | None) -> float | None:
    """USD for `usage` as the provider bills it: uncached prompt tokens at `prices.input`, cached
    ones at `prices.cached_input`, completion tokens at `prices.output` (per million). None
    without prices."""
    if prices is None:
        return None
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    total = ((usage.prompt_tokens - cached) * prices.input + cached * prices.cached_input
             + usage.completion_tokens * prices.output)
    return total / 1_000_000


def cache_savings_usd(cached_tokens: int, prices: Prices | None) -> float | None:
    """USD the provider's cache saved on `cached_tokens` (their full price less the cached one)."""
    if prices is None:
        return None
    return cached_tokens * max(0.0, prices.input - prices.cached_input) / 1_000_000
