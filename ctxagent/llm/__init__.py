"""The model client: settings, provider presets, streaming chat with retries, typed errors.

Modules (one idea each):
  settings.py  ModelSettings (one endpoint; the key is a SecretStr), mask()
  presets.py   PRESETS, settings_from_preset(), resolve_base_url/api_key(), check_endpoint()
  client.py    LLMClient.chat(): streaming, retries, cancel (reader.py, plain_reply.py: the reply's bytes)
  stream.py    StreamAssembler: chunks -> ChatResponse (tool-call fragments by index)
  prices.py    prices_for(): settings, else the shipped prices.json
  messages.py  ToolCall, StreamDelta, ChatResponse, prepare_messages() (outgoing shaping)
  retry.py     RetryPolicy, parse_retry_after(), call_with_retries()
  errors.py    the error classes and the SDK-exception table
  usage.py     Usage, usage_from_dict(), cost_usd() (cached tokens at the cache price)

Names are exported lazily: `import ctxagent.llm` does not import the openai SDK.
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
