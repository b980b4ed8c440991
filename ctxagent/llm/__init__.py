"""The model client: settings, provider presets, streaming chat with retries, typed errors.

Names are exported lazily: `import ctxagent.llm` does not import the openai SDK.
One line per module: `ctxagent/llm/README.md`; the story: docs/providers.md.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "LLMClient": "ctxagent.llm.client",
    "ChatResponse": "ctxagent.llm.messages",
    "StreamDelta": "ctxagent.llm.messages",
    "ToolCall": "ctxagent.llm.messages",
    "prepare_messages": "ctxagent.llm.messages",
    "Usage": "ctxagent.llm.usage",
    "ModelSettings": "ctxagent.llm.settings",
    "mask": "ctxagent.llm.settings",
    "PRESETS": "ctxagent.llm.presets",
    "settings_from_preset": "ctxagent.llm.presets",
    "check_endpoint": "ctxagent.llm.presets",
    "RetryPolicy": "ctxagent.llm.retry",
    "ProviderError": "ctxagent.llm.errors",
    "RateLimitError": "ctxagent.llm.errors",
    "ServerError": "ctxagent.llm.errors",
    "BadRequestError": "ctxagent.llm.errors",
    "ContextLengthError": "ctxagent.llm.errors",
    "AuthenticationError": "ctxagent.llm.errors",
    "ModelNotFoundError": "ctxagent.llm.errors",
    "LLMConnectionError": "ctxagent.llm.errors",
    "LLMTimeoutError": "ctxagent.llm.errors",
    "StreamInterruptedError": "ctxagent.llm.errors",
    "LLMCancelledError": "ctxagent.llm.errors",
    "UnexpectedReplyError": "ctxagent.llm.errors",
    "EmptyReplyError": "ctxagent.llm.errors",
    "Prices": "ctxagent.llm.prices",
    "prices_for": "ctxagent.llm.prices",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxagent.llm' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
