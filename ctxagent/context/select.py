"""Select: score every candidate and choose what fits the token budget.

score = relevance_weight * relevance + recency_weight * recency, where relevance is
BM25 against the query (`ctxagent.context.scoring`), normalised per layer (see
`score`; a caller's own score is kept) and recency halves every `half_life_s` seconds. Then, in order:

1. pinned candidates (the task's first user message, the current turn, packets marked
   `pinned`) are taken first;
2. candidates below `min_relevance` are dropped (never pinned, state or history ones);
3. pass 1: each layer fills its own budget (`budget.layer_budgets`), history layers
   newest first, the others best score first; a candidate that does not fit is
   skipped and the fill goes on (it never stops at the first misfit);
4. pass 2: what the layers left unused flows to the skipped candidates, best score
   first; with `enable_compression` the best packet that still does not fit is cut
   to the space left (if at least MIN_TRUNCATED_TOKENS);
5. a packet whose term-bigram set overlaps an already selected packet's by Jaccard
   >= `dedup_threshold` is dropped as a near-duplicate.

Cost: sorting is O(n log n); the duplicate check looks only at selected packets
through an inverted index of their shingles, so the whole stage grows as n log n.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

from ctxagent.context.budget import classify_query, layer_budgets
from ctxagent.context.packet import ContextConfig, ContextPacket
from ctxagent.context.scoring import query_scores, recency_score
from ctxagent.context.terms import terms

MIN_TRUNCATED_TOKENS = 48
HISTORY_LAYERS = ("history", "tool_results")
EXEMPT_TYPES = frozenset({"state", "task_state", "todo", "plan", "instructions", "system", "task", "current"})


@dataclass
class Candidate:
    """One thing that may enter the context: a packet or a history unit (list of messages).

    cost: tokens it adds when rendered. order: position in the history (units) or in
    the gathered list (packets). decision: "selected", "truncated" or "dropped".
    """

    id: str
    layer: str
    type: str
    text: str
    cost: int
    timestamp: float
    packet: ContextPacket | None = None
    unit: list[dict] | None = None
    order: int = 0
    pinned: bool = False
    relevance: float = 0.0
    recency: float = 0.0
    score: float = 0.0
    decision: str = "dropped"
    reason: str = ""
    source: str = ""
    shingles: frozenset = field(default=frozenset(), repr=False)

    def row(self) -> dict:
        """The candidate's line of the report (JSON-ready)."""
        return {
            "id": self.id, "layer": self.layer, "type": self.type, "source": self.source,
            "tokens": self.cost, "relevance": round(self.relevance, 4), "recency": round(self.recency, 4),
            "score": round(self.score, 4), "pinned": self.pinned, "decision": self.decision,
            "reason": self.reason, "preview": " ".join(self.text[:200].split()),
        }


@lru_cache(maxsize=32768)
def _cached_terms(text: str) -> tuple[str, ...]:
    return tuple(terms(text))


def score(cands: list[Candidate], query: str, config: ContextConfig, now: float) -> None:
    """Set relevance, recency and score in place.

    Relevance is BM25 over all candidates (one corpus, so IDF sees everything), divided
    by the best raw score *of the candidate's layer*: the best memory scores 1.0 among
    memories even when a code excerpt matches the query far better, so `min_relevance`
    filters within a layer, where the budgets compete. A packet's own score is kept.
    """
    docs = [_cached_terms(c.text) for c in cands]
    raw = query_scores(_cached_terms(query), docs, normalize=False)
    best: dict[str, float] = {}
    for cand, value in zip(cands, raw):
        best[cand.layer] = max(best.get(cand.layer, 0.0), value)
    for cand, value, doc in zip(cands, raw, docs):
        given = cand.packet.relevance_score if cand.packet is not None else None
        cand.relevance = given if given is not None else (value / best[cand.layer] if value > 0 else 0.0)
        cand.recency = recency_score(cand.timestamp, now=now, half_life_s=config.half_life_s)
        cand.score = config.relevance_weight * cand.relevance + config.recency_weight * cand.recency
        cand.shingles = frozenset(zip(doc, doc[1:])) if len(doc) > 1 else frozenset(doc)


class _Dedup:
    """Near-duplicate test against the packets selected so far (inverted shingle index)."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.index: dict[object, list[int]] = {}
        self.kept: list[Candidate] = []

    def duplicate_of(self, cand: Candidate) -> tuple[Candidate, float] | None:
        if cand.unit is not None or not cand.shingles:
            return None
        overlap: dict[int, int] = {}
        for sh in cand.shingles:
            for k in self.index.get(sh, ()):
                overlap[k] = overlap.get(k, 0) + 1
        for k, inter in overlap.items():
            other = self.kept[k]
            jaccard = inter / (len(cand.shingles) + len(other.shingles) - inter)
            if jaccard >= self.threshold:
                return other, jaccard
        return None

    def add(self, cand: Candidate) -> None:
        if cand.unit is not None:
            return
        k = len(self.kept)
        self.kept.append(cand)
        for sh in cand.shingles:
            self.index.setdefault(sh, []).append(k)


Truncator = Callable[[Candidate, int], Candidate | None]


def select(
    cands: list[Candidate], available: int, config: ContextConfig, query: str, *, truncate: Truncator | None = None
) -> dict:
    """Mark each candidate selected/truncated/dropped with a reason; return layer figures.

    `available`: tokens for all candidates together (the budget after system
    instructions, the current request and fixed overhead). `truncate(cand, tokens)`
    returns a shortened copy costing at most `tokens`, or None. Returns
    {"query_type", "layers": {layer: {"budget", "used"}}, "available", "used"}.
    """
    kind = classify_query(query)
    budgets = layer_budgets(config.layer_shares, available, kind, adaptive=config.adaptive_layers)
    state = _Fill(available, budgets, _Dedup(config.dedup_threshold))
    for cand in sorted((c for c in cands if c.pinned), key=lambda c: c.order):
        if not state.take(cand, "pinned", layer_limited=False) and truncate is not None:
            state.shorten(cand, truncate, "pinned, cut to fit")
    pool = [c for c in cands if not c.pinned and not _below_min(c, config)]
    pass1 = sorted(pool, key=lambda c: (-c.order,) if c.layer in HISTORY_LAYERS else (-c.score, c.order))
    for layer in budgets:
        for cand in (c for c in pass1 if c.layer == layer):
            state.take(cand, "recent turn" if layer in HISTORY_LAYERS else "fits its layer budget")
    leftovers = sorted((c for c in pool if c.decision == "dropped" and c.reason.startswith("over")), key=lambda c: (-c.score, c.order))
    for cand in leftovers:
        state.take(cand, "fits budget left unused by other layers", layer_limited=False)
    if config.enable_compression and truncate is not None:
        state.truncate_best(leftovers, truncate)
    return {
        "query_type": kind, "available": available, "used": available - state.total_left,
        "layers": {name: {"budget": budgets.get(name, 0), "used": state.used.get(name, 0)} for name in budgets},
    }


def _below_min(cand: Candidate, config: ContextConfig) -> bool:
    if cand.layer in HISTORY_LAYERS or cand.type in EXEMPT_TYPES or cand.relevance >= config.min_relevance:
        return False
    cand.decision = "dropped"
    cand.reason = f"relevance {cand.relevance:.2f} below min_relevance {config.min_relevance:g}"
    return True


class _Fill:
    """Greedy fill state: tokens left overall and per layer, and the duplicate index."""

    def __init__(self, total: int, budgets: dict[str, int], dedup: _Dedup) -> None:
        self.total_left = total
        self.layer_left = dict(budgets)
        self.used: dict[str, int] = {}
        self.dedup = dedup

    def take(self, cand: Candidate, why: str, *, layer_limited: bool = True) -> bool:
        limit = min(self.total_left, self.layer_left.get(cand.layer, 0)) if layer_limited else self.total_left
        if cand.cost > limit:
            where = f"{cand.layer} layer budget" if layer_limited and cand.cost <= self.total_left else "budget"
            cand.decision, cand.reason = "dropped", f"over {where}: needs {cand.cost} tokens, {limit} left"
            return False
        dup = self.dedup.duplicate_of(cand)
        if dup is not None and not cand.pinned:
            cand.decision, cand.reason = "dropped", f"near-duplicate of {dup[0].id} (Jaccard {dup[1]:.2f})"
            return False
        self._commit(cand, why)
        return True

    def _commit(self, cand: Candidate, why: str) -> None:
        cand.decision, cand.reason = ("selected" if cand.decision != "truncated" else "truncated"), why
        self.total_left -= cand.cost
        self.layer_left[cand.layer] = self.layer_left.get(cand.layer, 0) - cand.cost
        self.used[cand.layer] = self.used.get(cand.layer, 0) + cand.cost
        self.dedup.add(cand)

    def truncate_best(self, leftovers: list[Candidate], truncate: Truncator) -> None:
        """Cut the best-scoring packet that did not fit down to the space left."""
        for cand in leftovers:
            if cand.decision != "dropped" or cand.unit is not None or not cand.reason.startswith("over"):
                continue
            if self.total_left < MIN_TRUNCATED_TOKENS:
                return
            if self.dedup.duplicate_of(cand) is None:
                self.shorten(cand, truncate, f"best of the rest, cut to fit the {self.total_left} tokens left")
            return

    def shorten(self, cand: Candidate, truncate: Truncator, why: str) -> bool:
        """Replace `cand` by its shortened copy if that fits what is left; True if taken."""
        if self.total_left < MIN_TRUNCATED_TOKENS:
            return False
        short = truncate(cand, self.total_left)
        if short is None or short.cost > self.total_left:
            return False
        cand.text, cand.cost, cand.packet, cand.unit = short.text, short.cost, short.packet, short.unit
        cand.decision = "truncated"
        self._commit(cand, why)
        return True
