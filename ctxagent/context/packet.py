"""The data the context builder works on: `ContextPacket`, `ContextConfig`, `Message`.

Names and call conventions follow the Hello-Agents textbook (chapter 9, section 9.3.2),
with three corrections the issue asks for: a caller's relevance score is never
overwritten (the textbook recomputed any score equal to its 0.5 default), invalid
settings raise `ValueError` naming the field and its range (the textbook used
`assert`, which `python -O` removes), and timestamps may be datetimes or Unix seconds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Mapping

#: Packet types and the layer whose budget they draw on. Unknown types go to "evidence".
TYPE_LAYER: dict[str, str] = {
    "instructions": "system", "system": "system", "system_instruction": "system", "policy": "system",
    "memory": "memory",
    "rag": "evidence", "rag_result": "evidence", "evidence": "evidence", "knowledge": "evidence",
    "note": "evidence", "state": "evidence", "task_state": "evidence", "todo": "evidence",
    "code_structure": "evidence", "git_history": "evidence", "file": "evidence", "custom": "evidence",
    "history": "history", "conversation_history": "history",
    "tool_result": "tool_results",
    "task": "current", "current": "current",
}
LAYERS = ("system", "memory", "evidence", "history", "tool_results", "current")
DEFAULT_SHARES: dict[str, float] = {
    "system": 0.15, "memory": 0.10, "evidence": 0.30, "history": 0.30, "tool_results": 0.10, "current": 0.05,
}


def to_epoch(value: datetime | float | int | str | None) -> float:
    """Unix seconds from a datetime, a number, an ISO-8601 string or None (= now). Lenient,
    for the timestamps of history messages and notes: anything else, and a number that is
    not finite, count as now (`ContextPacket` itself refuses them)."""
    if value.__class__ is float and math.isfinite(value):  # the usual case: gather stores Unix seconds
        return value
    if value is None:
        return time.time()
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else time.time()
    parsed = _from_iso(str(value))
    return time.time() if parsed is None else parsed.timestamp()


def _from_iso(text: str) -> datetime | None:
    """`text` as an ISO-8601 datetime (a final `Z` read as UTC), or None."""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _check_timestamp(value: Any) -> None:
    """Raise ValueError unless `value` is a datetime, finite Unix seconds or an ISO-8601 string."""
    if isinstance(value, datetime):
        return
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise ValueError(f"ContextPacket.timestamp must be finite Unix seconds, got {value!r}")
        return
    if isinstance(value, str) and _from_iso(value) is not None:
        return
    raise ValueError("ContextPacket.timestamp must be a datetime, Unix seconds or an ISO-8601 string "
                     f"(e.g. '2025-01-31T12:00:00'), got {value!r}")


@dataclass
class ContextPacket:
    """One candidate piece of context: `content`, `timestamp` (datetime, Unix seconds or ISO;
    default now), `token_count` (None: estimated), `relevance_score` (None: BM25; else clamped to
    [0, 1]), `metadata` (`type` picks the layer, `pinned`, `source`/`id`/`title`).
    Reference: docs/context.md ("The builder's data and functions")."""

    content: str
    timestamp: datetime | float | None = None
    token_count: int | None = None
    relevance_score: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.content, str):
            raise ValueError(f"ContextPacket.content must be a string, got {type(self.content).__name__}")
        if self.timestamp is None:
            self.timestamp = datetime.now()
        elif not (self.timestamp.__class__ is float and math.isfinite(self.timestamp)):
            _check_timestamp(self.timestamp)
        if self.metadata is None:
            self.metadata = {}
        elif not isinstance(self.metadata, dict):
            if not isinstance(self.metadata, Mapping):
                raise ValueError(f"ContextPacket.metadata must be a dict (e.g. {{'type': 'note'}}), "
                                 f"got {type(self.metadata).__name__}")
            self.metadata = dict(self.metadata)
        if self.relevance_score is not None:
            if not isinstance(self.relevance_score, (int, float)) or isinstance(self.relevance_score, bool):
                raise ValueError("ContextPacket.relevance_score must be a number in [0, 1] or None (let the builder "
                                 f"rank it), got {self.relevance_score!r}")
            score = float(self.relevance_score)
            self.relevance_score = 0.0 if math.isnan(score) else max(0.0, min(1.0, score))
        if self.token_count is not None and (not isinstance(self.token_count, int) or isinstance(self.token_count, bool)
                                             or self.token_count < 0):
            raise ValueError(f"ContextPacket.token_count must be an integer >= 0 or None (estimated), got {self.token_count!r}")
        if self.token_count is None:
            from ctxagent.text.tokens import estimate_tokens

            self.token_count = estimate_tokens(self.content)

    @property
    def epoch(self) -> float:
        """The timestamp in Unix seconds."""
        return to_epoch(self.timestamp)

    @property
    def type(self) -> str:
        """`metadata["type"]`, default "custom"."""
        kind = self.metadata.get("type")
        return kind if kind.__class__ is str and kind else str(kind or "custom")

    @property
    def layer(self) -> str:
        """The budget layer of this packet's type (unknown types: "evidence")."""
        return TYPE_LAYER.get(self.type, "evidence")


@dataclass
class Message:
    """A chat message (textbook `hello_agents.core.message.Message`): content, role, timestamp.

    Everywhere a Message is accepted, a plain dict with `role` and `content` is too.
    """

    content: str | None
    role: str
    timestamp: datetime | float | None = None

    def __post_init__(self) -> None:
        if self.timestamp is None:
            self.timestamp = datetime.now()

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI message dict (`timestamp` kept as Unix seconds for recency)."""
        return {"role": self.role, "content": self.content, "timestamp": to_epoch(self.timestamp)}


def _check_range(name: str, value: float, low: float, high: float) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"ContextConfig.{name} must be a number in [{low}, {high}], got {value!r}")


@dataclass
class ContextConfig:
    """Settings of one context build, in tokens of the target model; each field's range and
    meaning is in docs/context.md ("Settings"). Raises ValueError out of range."""

    max_tokens: int = 8000
    reserve_ratio: float = 0.15
    min_relevance: float = 0.1
    enable_compression: bool = True
    recency_weight: float = 0.3
    relevance_weight: float = 0.7
    half_life_s: float = 3600.0
    layer_shares: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_SHARES))
    dedup_threshold: float = 0.8
    tool_result_max_chars: int = 20_000
    adaptive_layers: bool = True
    output_instructions: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.max_tokens, int) or isinstance(self.max_tokens, bool) or not 64 <= self.max_tokens <= 10**8:
            raise ValueError(f"ContextConfig.max_tokens must be an integer in [64, 100000000], got {self.max_tokens!r}")
        _check_range("reserve_ratio", self.reserve_ratio, 0.0, 0.9)
        _check_range("min_relevance", self.min_relevance, 0.0, 1.0)
        _check_range("recency_weight", self.recency_weight, 0.0, 1.0)
        _check_range("relevance_weight", self.relevance_weight, 0.0, 1.0)
        if abs(self.recency_weight + self.relevance_weight - 1.0) > 1e-6:
            raise ValueError(
                "ContextConfig.relevance_weight + recency_weight must equal 1.0, got "
                f"{self.relevance_weight} + {self.recency_weight}"
            )
        _check_range("half_life_s", self.half_life_s, 1e-9, 1e9)
        _check_range("dedup_threshold", self.dedup_threshold, 1e-9, 1.0)
        for name in ("enable_compression", "adaptive_layers"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"ContextConfig.{name} must be True or False, got {getattr(self, name)!r}")
        if not isinstance(self.tool_result_max_chars, int) or self.tool_result_max_chars < 200:
            raise ValueError(f"ContextConfig.tool_result_max_chars must be an integer >= 200, got {self.tool_result_max_chars!r}")
        if self.output_instructions is not None and not isinstance(self.output_instructions, str):
            raise ValueError(f"ContextConfig.output_instructions must be text, got {self.output_instructions!r}")
        self.layer_shares = _check_shares(self.layer_shares)

    @property
    def reserve_tokens(self) -> int:
        """Tokens kept free for the reply: round(max_tokens * reserve_ratio)."""
        return round(self.max_tokens * self.reserve_ratio)

    @property
    def input_budget(self) -> int:
        """Tokens the request itself may use: max_tokens - reserve_tokens."""
        return self.max_tokens - self.reserve_tokens

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> "ContextConfig":
        """Build from a settings table (`[context]` of config.toml); unknown keys raise ValueError."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown context setting(s) {unknown}; known: {sorted(known)}")
        return cls(**dict(values))


def _check_shares(shares: Mapping[str, float]) -> dict[str, float]:
    if not isinstance(shares, Mapping):
        raise ValueError(f"ContextConfig.layer_shares must be a table of layer = share, e.g. {{history = 0.3}}, "
                         f"got {shares!r}; layers: {list(LAYERS)}")
    unknown = sorted(set(shares) - set(LAYERS), key=str)
    if unknown:
        raise ValueError(f"ContextConfig.layer_shares has unknown layer(s) {unknown}; layers: {list(LAYERS)}")
    merged = {layer: shares.get(layer, DEFAULT_SHARES[layer]) for layer in LAYERS}
    for layer, share in merged.items():
        _check_range(f"layer_shares[{layer!r}]", share, 0.0, 1.0)
    merged = {layer: float(share) for layer, share in merged.items()}
    total = sum(merged.values())
    if total <= 0:
        raise ValueError("ContextConfig.layer_shares must have a positive sum")
    return {layer: share / total for layer, share in merged.items()}
