"""Token usage of model calls and its cost.

`Usage` (tokens): prompt_tokens, completion_tokens, cached_tokens (part of prompt),
reasoning_tokens (part of completion), read from a completion's `usage`; none gives
zeros. Cost in USD from `ModelSettings`' per-million prices, None without a price.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


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
    """Usage from a completion's `usage` mapping; None, missing or malformed fields -> 0."""
    if not data:
        return Usage()
    prompt_details = data.get("prompt_tokens_details") or {}
    completion_details = data.get("completion_tokens_details") or {}
    cached = _int(prompt_details.get("cached_tokens")) or _int(data.get("prompt_cache_hit_tokens"))
    return Usage(
        prompt_tokens=_int(data.get("prompt_tokens")),
        completion_tokens=_int(data.get("completion_tokens")),
        cached_tokens=cached,
        reasoning_tokens=_int(completion_details.get("reasoning_tokens")),
    )


def _int(value: Any) -> int:
    try:
        return max(0, int(value)) if value is not None else 0
    except (TypeError, ValueError):
        return 0


def cost_usd(usage: Usage, price_prompt_per_mtok: float | None,
             price_completion_per_mtok: float | None) -> float | None:
    """USD for `usage` at the given per-million-token prices.

    None when neither price is set; a missing price counts as 0. Cached prompt tokens
    are charged at the prompt price (no separate cache price is configured).
    """
    if price_prompt_per_mtok is None and price_completion_per_mtok is None:
        return None
    prompt = usage.prompt_tokens * (price_prompt_per_mtok or 0.0)
    completion = usage.completion_tokens * (price_completion_per_mtok or 0.0)
    return (prompt + completion) / 1_000_000
