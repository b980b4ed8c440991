"""Select: score every candidate and choose what fits the token budget.

score = relevance_weight * BM25 relevance + recency_weight * recency; pinned first, then
`min_relevance`, two fill passes, near-duplicate drop (docs/context.md, "How selection
works"). Lower-bound costs are recounted exactly before any decision takes them.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from ctxagent.context.budget import classify_query, layer_budgets
from ctxagent.context.packet import ContextConfig, ContextPacket
from ctxagent.text.scoring import recency_score
from ctxagent.text.statistics import analyse
from ctxagent.text.terms import evict_oldest, terms

MIN_TRUNCATED_TOKENS = 48
HISTORY_LAYERS = ("history", "tool_results")
EXEMPT_TYPES = frozenset({"state", "task_state", "todo", "plan", "instructions", "system", "task", "current"})


@dataclass(slots=True)
class Candidate:
    """One thing that may enter the context: a packet or a history unit (list of messages).
    `cost`: tokens (exact when `exact`, else a lower bound `select` recounts), `order`: position,
    `decision`: "selected", "truncated" or "dropped"."""

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
    exact: bool = True

    def row(self) -> dict:
        """The candidate's line of the report (JSON-ready)."""
        relevance = self.relevance  # mostly 0.0 (no query term): its own rounding, and round() is slow
        return {
            "id": self.id, "layer": self.layer, "type": self.type, "source": self.source,
            "tokens": self.cost, "tokens_exact": self.exact, "relevance": round(relevance, 4) if relevance else relevance,
            "recency": round(self.recency, 4), "score": round(self.score, 4), "pinned": self.pinned,
            "decision": self.decision, "reason": self.reason, "preview": self.text[:PREVIEW_CHARS].replace("\n", " "),
        }


SKETCH_K = 32  # hashes kept per text for the near-duplicate test (bottom-k MinHash)
PREVIEW_CHARS = 200  # characters of each candidate's text kept in the report
MAX_POSTING = 24  # sketch hashes shared by more kept texts than this are not used to find pairs


class _TermMemo(dict):
    """term -> fn(term), computed on first use; the older half goes at 65,536 terms."""

    def __init__(self, fn: Callable[[str], Any]) -> None:
        super().__init__()
        self.fn = fn

    def __missing__(self, term: str) -> Any:
        if len(self) >= 65_536:
            evict_oldest(self, 32_768)
        value = self[term] = self.fn(term)
        return value


# A bigram (a, b) hashes as CRC-32 of "a\x00b" in UTF-8. CRC-32 runs on, so that is
# crc32(b, crc32(a + "\x00")): one C call per bigram on two parts cached per term.
_TERM_BYTES = _TermMemo(lambda term: term.encode("utf-8"))
_TERM_HEADS = _TermMemo(lambda term: zlib.crc32(term.encode("utf-8") + b"\x00"))


@lru_cache(maxsize=32768)
def sketch(text: str) -> frozenset[int]:
    """Bottom-k MinHash sketch of the text's term bigrams (all of them when fewer than
    SKETCH_K): Jaccard of two sketches estimates that of the full bigram sets (Broder 1997).
    Hashes are CRC-32, stable across runs (unlike hash())."""
    doc = terms(text)
    if len(doc) > 1:
        shingles = set(map(zlib.crc32, map(_TERM_BYTES.__getitem__, doc[1:]), map(_TERM_HEADS.__getitem__, doc[:-1])))
    else:
        shingles = set(map(zlib.crc32, map(_TERM_BYTES.__getitem__, doc)))
    return frozenset(shingles if len(shingles) <= SKETCH_K else sorted(shingles)[:SKETCH_K])


def sketch_jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    """Estimated Jaccard similarity of the sets behind two sketches (exact when both are whole)."""
    union = a | b
    if len(union) > SKETCH_K:
        union = frozenset(sorted(union)[:SKETCH_K])
    return len(union & a & b) / len(union) if union else 0.0


def score(cands: list[Candidate], query: str, config: ContextConfig, now: float, *, raw: list[float] | None = None) -> None:
    """Set relevance, recency and score in place: BM25 over all candidates, normalised by the best
    raw score of the candidate's layer (so `min_relevance` filters within a layer); a packet's
    own score is kept. `raw`: precomputed raw scores (`ctxagent.text.statistics.analyse`).
    Reference: docs/context.md ("The builder's data and functions")."""
    if raw is None:
        raw = analyse([c.text for c in cands], terms(query))[0]
    best: dict[str, float] = {}  # layer -> its best raw score, for the layers that have one above 0
    for cand, value in zip(cands, raw):
        if value > best.get(cand.layer, 0.0):
            best[cand.layer] = value
    w_rel, w_rec = config.relevance_weight, config.recency_weight
    recency_score(now, now=now, half_life_s=config.half_life_s)  # validates half_life_s once
    decay = 0.5 ** (1.0 / config.half_life_s)  # per second: the same curve as recency_score
    for cand, value in zip(cands, raw):
        given = cand.packet.relevance_score if cand.packet is not None else None
        if given is not None:
            relevance = given
        else:
            relevance = value / best[cand.layer] if value > 0 else 0.0
        age = now - cand.timestamp
        recency = decay ** age if age > 0 else 1.0  # a timestamp in the future counts as now
        cand.relevance, cand.recency, cand.score = relevance, recency, w_rel * relevance + w_rec * recency


class _Dedup:
    """Near-duplicate test against the packets selected so far.

    Identical sketches (same bigram set) are found by dictionary lookup; other pairs
    through an inverted index of sketch hashes, skipping hashes shared by more than
    MAX_POSTING kept texts (common phrases), so each test costs O(SKETCH_K * MAX_POSTING).
    """

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.index: dict[int, list[int]] = {}
        self.kept: list[tuple[Candidate, frozenset[int]]] = []
        self.exact: dict[frozenset[int], Candidate] = {}

    def duplicate_of(self, cand: Candidate) -> tuple[Candidate, float] | None:
        if cand.unit is not None:
            return None
        mine = sketch(cand.text)
        twin = self.exact.get(mine)
        if twin is not None:
            return twin, 1.0
        overlap: dict[int, int] = {}  # kept text -> sketch hashes shared with `mine`, in order of first sharing
        for posting in filter(None, map(self.index.get, mine)):  # the kept texts holding each hash of `mine`
            if len(posting) <= MAX_POSTING:  # skip the hashes most kept texts share
                for k in posting:
                    overlap[k] = overlap.get(k, 0) + 1
        need = 0.5 * self.threshold
        for k, shared in overlap.items():
            other, theirs = self.kept[k]
            if shared < need * min(len(mine), len(theirs)):
                continue  # too few shared hashes to reach the threshold: skip the estimate
            jaccard = sketch_jaccard(mine, theirs)
            if jaccard >= self.threshold:
                return other, jaccard
        return None

    def add(self, cand: Candidate) -> None:
        if cand.unit is not None:
            return
        mine = sketch(cand.text)
        self.exact.setdefault(mine, cand)
        k = len(self.kept)
        self.kept.append((cand, mine))
        for h in mine:
            self.index.setdefault(h, []).append(k)


Truncator = Callable[[Candidate, int], Candidate | None]


def select(
    cands: list[Candidate], available: int, config: ContextConfig, query: str, *, truncate: Truncator | None = None,
    recount: Callable[[Candidate], int] | None = None,
) -> dict:
    """Mark each candidate selected/truncated/dropped with a reason; `available`: tokens for all
    candidates; `truncate(cand, tokens)` -> shorter copy or None; `recount(cand)` -> exact cost.
    Returns {"query_type", "layers": {layer: {"budget", "used"}}, "available", "used"}."""
    kind = classify_query(query)
    budgets = layer_budgets(config.layer_shares, available, kind, adaptive=config.adaptive_layers)
    state = _Fill(available, budgets, _Dedup(config.dedup_threshold), recount)
    for cand in sorted((c for c in cands if c.pinned), key=lambda c: c.order):
        if not state.take(cand, "pinned", layer_limited=False) and truncate is not None:
            state.shorten(cand, truncate, "pinned, cut to fit")
    pool = _drop_below_min([c for c in cands if not c.pinned], config)
    pass1: dict[str, list[Candidate]] = {}  # layer -> its candidates, newest (history) or best first
    for cand in sorted(pool, key=lambda c: (-c.order,) if c.layer in HISTORY_LAYERS else (-c.score, c.order)):
        pass1.setdefault(cand.layer, []).append(cand)
    for layer in budgets:
        why = "recent turn" if layer in HISTORY_LAYERS else "fits its layer budget"
        for cand in pass1.get(layer, ()):
            state.take(cand, why)
    leftovers = sorted((c for c in pool if c.decision == "dropped" and c.reason.startswith("over")), key=lambda c: (-c.score, c.order))
    for cand in leftovers:
        state.take(cand, "fits budget left unused by other layers", layer_limited=False)
    if config.enable_compression and truncate is not None:
        state.truncate_best(leftovers, truncate)
    return {
        "query_type": kind, "available": available, "used": available - state.total_left,
        "layers": {name: {"budget": budgets.get(name, 0), "used": state.used.get(name, 0)} for name in budgets},
    }


def _drop_below_min(cands: list[Candidate], config: ContextConfig) -> list[Candidate]:
    """`cands` without those below `min_relevance` (history and EXEMPT_TYPES never are),
    which are marked dropped. Most of those share a relevance (0.0: no query term), so
    each relevance's reason is written once."""
    kept = []
    floor = config.min_relevance
    below = f" below min_relevance {floor:g}"
    reasons: dict[tuple[float, float], str] = {}  # (relevance, its sign: -0.0 == 0.0 prints "-0.00") -> reason
    for cand in cands:
        relevance = cand.relevance
        if relevance >= floor or cand.layer in HISTORY_LAYERS or cand.type in EXEMPT_TYPES:
            kept.append(cand)
            continue
        key = (relevance, math.copysign(1.0, relevance))
        reason = reasons.get(key)
        if reason is None:
            reason = reasons[key] = f"relevance {relevance:.2f}{below}"
        cand.decision, cand.reason = "dropped", reason
    return kept


class _Fill:
    """Greedy fill state: tokens left overall and per layer, and the duplicate index."""

    def __init__(self, total: int, budgets: dict[str, int], dedup: _Dedup, recount: Callable[[Candidate], int] | None) -> None:
        self.total_left = total
        self.layer_left = dict(budgets)
        self.used: dict[str, int] = {}
        self.dedup = dedup
        self.recount = recount

    def count(self, cand: Candidate) -> None:
        """Replace a lower-bound cost by the exact one (once)."""
        if not cand.exact:
            if self.recount is None:
                raise ValueError(f"candidate {cand.id} has a lower-bound cost but select() got no recount")
            cand.cost, cand.exact = self.recount(cand), True

    def take(self, cand: Candidate, why: str, *, layer_limited: bool = True) -> bool:
        limit = min(self.total_left, self.layer_left.get(cand.layer, 0)) if layer_limited else self.total_left
        if cand.cost <= limit:
            self.count(cand)
        if cand.cost > limit:
            where = f"{cand.layer} layer budget" if layer_limited and cand.cost <= self.total_left else "budget"
            needs = f"{cand.cost}" if cand.exact else f"at least {cand.cost}"
            cand.decision, cand.reason = "dropped", f"over {where}: needs {needs} tokens, {limit} left"
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
        self.count(cand)
        short = truncate(cand, self.total_left)
        if short is None or short.cost > self.total_left:
            return False
        cand.text, cand.cost, cand.packet, cand.unit = short.text, short.cost, short.packet, short.unit
        cand.decision = "truncated"
        self._commit(cand, why)
        return True
