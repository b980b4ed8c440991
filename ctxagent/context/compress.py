"""Compress: cut packets and history units to a token limit, and make a finished context fit its budget.

The builder's own last stage (truncation); session compaction is
`ctxagent.context.compaction.compactor`. Cuts keep head and tail around a marker; limits
are found by bisection against the real counter (docs/context.md, "Module notes").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ctxagent.context.messages import strip_private, truncate_observation, truncate_tool_result
from ctxagent.context.select import Candidate
from ctxagent.text.tokens import TokenCounter

MIN_CHARS = 64


def truncate_to_tokens(text: str, max_tokens: int, count: Callable[[str], int], *, cut=truncate_observation) -> str | None:
    """The longest head+tail cut of `text` (by `cut`) whose `count` is <= `max_tokens`.

    Returns `text` itself if it fits, None if not even MIN_CHARS characters fit.
    """
    if count(text) <= max_tokens:
        return text
    low, high, best = MIN_CHARS, len(text) - 1, None
    while low <= high:
        mid = (low + high) // 2
        candidate = cut(text, mid)
        if count(candidate) <= max_tokens:
            best, low = candidate, mid + 1
        else:
            high = mid - 1
    return best


def shrink_unit(unit: list[dict], max_tokens: int, counter: TokenCounter) -> list[dict] | None:
    """A copy of a history unit whose messages cost at most `max_tokens` in all.

    Tool results are cut first (largest first, JSON keys kept), then the content of
    a lone user/assistant message. Tool calls, ids and `reasoning_content` stay
    intact, so the pair stays valid (C01, C05, C06). None if it cannot fit.
    """
    out = [dict(m) for m in unit]
    cost = sum(counter.count_message(strip_private(m)) for m in out)
    order = sorted(range(len(out)), key=lambda i: -len(str(out[i].get("content") or "")))
    for i in order:
        if cost <= max_tokens:
            break
        msg = out[i]
        content = msg.get("content")
        if not isinstance(content, str) or len(content) <= MIN_CHARS:
            continue
        own = counter.count_message(strip_private(msg))
        room = max_tokens - (cost - own) - (own - counter.count(content))
        cut = truncate_tool_result if msg.get("role") == "tool" else truncate_observation
        short = truncate_to_tokens(content, room, counter.count, cut=cut) if room > 0 else None
        if short is None:
            return None
        msg["content"] = short
        cost = cost - own + counter.count_message(strip_private(msg))
    return out if cost <= max_tokens else None


def make_truncator(counter: TokenCounter, cost_of: Callable[[Candidate], int], text_of_packet) -> Callable:
    """The `truncate(cand, tokens)` callback `select` uses, for packets and units."""

    def truncate(cand: Candidate, tokens: int) -> Candidate | None:
        if cand.unit is not None:
            overhead = cand.cost - sum(counter.count_message(strip_private(m)) for m in cand.unit)
            unit = shrink_unit(cand.unit, tokens - overhead, counter)
            if unit is None:
                return None
            short = replace(cand, unit=unit)
        else:
            overhead = cand.cost - counter.count(cand.packet.content)  # separator and label
            text = truncate_to_tokens(cand.packet.content, tokens - overhead - 2, counter.count)
            if text is None:
                return None
            short = replace(cand, packet=replace(cand.packet, content=text, token_count=counter.count(text)))
            short.text = text_of_packet(short.packet)
        short.cost = cost_of(short)
        return short if short.cost <= tokens else None

    return truncate


def enforce_budget(
    measure: Callable[[], int], cands: list[Candidate], budget: int, *, max_rounds: int = 50
) -> list[str]:
    """Drop the lowest-scoring non-pinned selected candidates until `measure()` <= `budget`.

    `measure` renders and counts the whole context from the candidates' current
    decisions. Returns the ids dropped (each marked "dropped: final fit"). Stops when
    nothing droppable is left; the caller then checks the budget itself.
    """
    dropped: list[str] = []
    for _ in range(max_rounds):
        excess = measure() - budget
        if excess <= 0:
            return dropped
        live = sorted((c for c in cands if c.decision != "dropped" and not c.pinned), key=lambda c: (c.score, -c.order))
        if not live:
            return dropped
        freed = 0
        for cand in live:
            cand.decision, cand.reason = "dropped", f"removed in the final fit ({excess} tokens over)"
            dropped.append(cand.id)
            freed += cand.cost
            if freed >= excess:
                break
    return dropped
