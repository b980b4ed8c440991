"""Token budgets for context_fetch: counting, a fair split between hits, trimming.

Each source gets its own budget (default 800 tokens), split max-min fairly between hits
("water-filling"); a hit over its share loses context lines, then text. `count_tokens`
is `ctxagent.text.tokens.estimate_tokens`, additive over pieces (docs/context-fetch.md).
"""

from __future__ import annotations

from typing import Callable, Sequence

try:
    from ctxagent.text.tokens import estimate_tokens as _estimate
except ImportError:  # pragma: no cover - the context package is part of ctxagent
    _estimate = None

#: A hit trimmed below this many tokens is dropped rather than shown as a stub.
MIN_ITEM_TOKENS = 8
ELLIPSIS = "…"


def count_tokens(text: str) -> int:
    """Estimated tokens of `text` (see the module doc). 0 for empty text."""
    if _estimate is not None:
        return _estimate(text)
    return (len(text) + 3) // 4


def fair_shares(budget: int, needs: Sequence[int]) -> list[int]:
    """Max-min fair split of `budget` tokens: share i <= needs[i], sum <= budget.

    Smaller needs are met in full; what they leave is shared equally by the rest.
    >>> fair_shares(100, [10, 80, 80])
    [10, 45, 45]
    """
    shares = [0] * len(needs)
    left = max(0, budget)
    order = sorted(range(len(needs)), key=lambda i: needs[i])
    for rank, i in enumerate(order):
        equal = left // (len(needs) - rank)
        shares[i] = min(max(0, needs[i]), equal)
        left -= shares[i]
    return shares


def truncate_to(text: str, allowance: int, render: Callable[[str], str] = lambda s: s) -> str | None:
    """The longest prefix of `text` (marked with "…" when cut) whose rendering costs at
    most `allowance` tokens; None if even a few characters do not fit.

    `render(prefix)` gives the full text whose tokens count (e.g. with a line prefix).
    """
    if count_tokens(render(text)) <= allowance:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # largest n with render(text[:n] + "…") within the allowance
        mid = (lo + hi + 1) // 2
        if count_tokens(render(text[:mid] + ELLIPSIS)) <= allowance:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0 or allowance < MIN_ITEM_TOKENS:
        return None
    return text[:lo].rstrip() + ELLIPSIS


def fit_items(items: Sequence[dict], budget: int, render: Callable[[dict], str],
              body_keys: Sequence[str]) -> list[dict]:
    """`items` (in order) cut to a fair share each of `budget` tokens, counted on
    `render(item)`; over-budget items lose the end of `body_keys[0]`, then (emptied)
    of the next key, and so on; items that cannot fit are dropped.

    Returns new dicts; the total rendered tokens of the result is at most `budget`.
    """
    needs = [count_tokens(render(item)) for item in items]
    out = []
    for item, need, share in zip(items, needs, fair_shares(budget, needs)):
        fitted = dict(item) if need <= share else _trim_item(dict(item), share, render, body_keys)
        if fitted is not None:
            out.append(fitted)
    return out


def _trim_item(item: dict, share: int, render: Callable[[dict], str], body_keys: Sequence[str]) -> dict | None:
    for key in body_keys:
        body = truncate_to(str(item.get(key) or ""), share, lambda b, key=key: render({**item, key: b}))
        if body is not None:
            return {**item, key: body}
        item[key] = ""
    return None
