"""Layer budgets: how the input budget is split between layers, by query type.

`layer_shares` are re-weighted by query type ("code", "recall", "followup", "general")
when `adaptive_layers` is on, then normalised. The multipliers are engineering
judgement, not measured (docs/context.md, "Module notes").
"""

from __future__ import annotations

import re

from ctxagent.context.packet import LAYERS

_IDENT_RE = re.compile(  # case-sensitive: snake_case, camelCase, CamelCase, `code`, file.ext
    r"`[^`]+`|\b[A-Za-z]+_\w+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b"
    r"|[\w/.-]+\.(?:py|js|ts|rs|go|java|c|h|cpp|md|toml|json|yaml|yml)\b"
)
_CODE_WORDS_RE = re.compile(
    r"\b(?:error|exception|traceback|bug|stack|function|method|class|module|tests?|compile|refactor|import|def)\b"
    r"|函数|代码|报错|异常|类名|方法|模块|编译|测试",
    re.IGNORECASE,
)
_RECALL_RE = re.compile(
    r"\b(?:remember|recall|earlier|previously|before|last time|we discussed|you said|my preference)\b"
    r"|之前|上次|记得|刚才|以前|我说过",
    re.IGNORECASE,
)
_FOLLOWUP_RE = re.compile(r"^\s*(?:and|also|then|so|what about|how about|again|continue|ok|okay)\b|继续|还有|那么|再", re.IGNORECASE)

MULTIPLIERS: dict[str, dict[str, float]] = {
    "code": {"evidence": 1.6, "tool_results": 1.5, "history": 0.7},
    "recall": {"memory": 2.0, "history": 1.3},
    "followup": {"history": 1.6, "tool_results": 1.2},
    "general": {},
}


def classify_query(query: str) -> str:
    """"code", "recall", "followup" or "general" (see the module docstring)."""
    if not query:
        return "general"
    if _RECALL_RE.search(query):
        return "recall"
    if _IDENT_RE.search(query) or _CODE_WORDS_RE.search(query):
        return "code"
    short = len(query.split()) <= 8 and len(query) <= 60
    if short and _FOLLOWUP_RE.search(query):
        return "followup"
    return "general"


def layer_budgets(shares: dict[str, float], available: int, kind: str, *, adaptive: bool = True) -> dict[str, int]:
    """Tokens per selectable layer (memory, evidence, history, tool_results) out of `available`.

    System instructions and the current request are required, not selected, so their
    shares are left out and the rest renormalised. Budgets are floors, so they sum
    to at most `available`.
    """
    weights = {layer: shares.get(layer, 0.0) for layer in LAYERS if layer not in ("system", "current")}
    if adaptive:
        for layer, factor in MULTIPLIERS.get(kind, {}).items():
            weights[layer] *= factor
    total = sum(weights.values()) or 1.0
    return {layer: int(max(0, available) * weight / total) for layer, weight in weights.items()}
