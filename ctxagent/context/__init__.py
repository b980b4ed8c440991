"""The context engine: what each model call sees, under a token budget, and why.

Public API (Hello-Agents chapter 9 conventions): `ContextBuilder`, `ContextConfig`,
`ContextPacket`, `Message`, `TokenCounter`, `estimate_tokens`; the loop's side:
`ContextAssembler` (imported on first use). Stages: `gather`, `select`, `structure`,
`compress`; message rules in `messages`; snapshots of every call in `snapshot`.
"""

from __future__ import annotations

import importlib
from typing import Any

from ctxagent.context.builder import ContextBuilder
from ctxagent.context.packet import ContextConfig, ContextPacket, Message
from ctxagent.text.tokens import TokenCounter, estimate_tokens

# Imported on first use: the assembler and compaction sit on the loop's side of the
# seam and pull in agent modules that plain library users of the builder do not need.
_LAZY = {
    "ContextAssembler": "ctxagent.context.assembler",
    "CompactionConfig": "ctxagent.context.compaction.compactor",
    "compact_conversation": "ctxagent.context.compaction.compactor",
}

__all__ = ["ContextBuilder", "ContextConfig", "ContextPacket", "Message", "TokenCounter", "estimate_tokens", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxagent.context' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
