"""Per-token prices of a model: the user's settings, else the shipped table (`prices.json`).

`prices.json` holds USD per million tokens (input, cached input, output) of the presets'
default models, the date they were taken and the page each came from; local servers
cost 0. Settings win over the table: when any of `model.price_prompt_per_mtok`,
`price_cached_prompt_per_mtok`, `price_completion_per_mtok` is set, those are the prices
(a missing prompt or completion price counts 0, a missing cached price is the prompt
price). The table is looked up by provider preset and exact model name only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ctxagent.llm.settings import ModelSettings

PRICE_FILE = Path(__file__).with_name("prices.json")


@dataclass(frozen=True)
class Prices:
    """USD per million tokens: `input` (uncached prompt), `cached_input`, `output`; `source`
    says where they come from ("settings", or "prices.json of <date>"), `page` the provider's page."""

    input: float
    cached_input: float
    output: float
    source: str
    page: str = ""

    def describe(self) -> str:
        """`$0.28 in, $0.028 cached, $0.42 out per million tokens (prices.json of 2026-12-02)`."""
        return (f"${self.input:g} in, ${self.cached_input:g} cached, ${self.output:g} out per million tokens "
                f"({self.source})")


@lru_cache(maxsize=1)
def price_table() -> dict[str, Any]:
    """The parsed `prices.json` (read once)."""
    return json.loads(PRICE_FILE.read_text(encoding="utf-8"))


def prices_for(settings: ModelSettings) -> Prices | None:
    """The prices that turn `settings`' usage into cost, or None when none are known."""
    own = (settings.price_prompt_per_mtok, settings.price_cached_prompt_per_mtok, settings.price_completion_per_mtok)
    if any(p is not None for p in own):
        prompt = own[0] or 0.0
        return Prices(prompt, own[1] if own[1] is not None else prompt, own[2] or 0.0, "settings")
    table = price_table()
    provider = table["providers"].get(settings.provider)
    if provider is None:
        return None
    row = provider["models"].get(settings.model) or provider["models"].get("*")
    if row is None:
        return None
    return Prices(float(row["input"]), float(row["cached_input"]), float(row["output"]),
                  f"prices.json of {table['taken']}", provider["source"])
