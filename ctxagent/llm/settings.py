"""Settings of one model endpoint (`ModelSettings`) and the `mask` helper for API keys.

Provider defaults live in `ctxagent.llm.presets`; `ctxagent.config.settings` fills a
`ModelSettings`. The key is a `ctxagent.validation.Secret` (`**********` in repr and
`to_dict`); only the client reads it, for the `Authorization` header.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from ctxagent.validation import Record, Secret


class ModelSettings(Record, kw_only=True):
    """How to reach one OpenAI-compatible chat-completions endpoint and how to talk to it.

    Built from configuration by `ctxagent.validation.validate` (strict, finite); a plain
    constructor call is not validated (for values of the code: presets, the offline model).
    """

    provider: str = "openai"
    """Preset name: openai, deepseek, qwen, ollama, vllm, llamacpp, local or custom."""
    model: str
    """Model name sent as `model`, e.g. "gpt-4o-mini", "deepseek-chat", "qwen-plus"."""
    base_url: str | None = None
    """OpenAI-compatible root ending in /v1; None means the preset's URL."""
    api_key: Secret | None = None
    """API key; never shown by repr/str/dumps. None: no key (local servers)."""
    context_window: Annotated[int, Meta(ge=64, le=100_000_000)] = 128_000
    """Tokens the model accepts, prompt and output together; 64 (the context engine's smallest window) to 10^8. The agent's system prompt and all tool schemas take about 4,600 of them: below about 8,000 set [agent] tools to fewer tools."""
    max_output_tokens: Annotated[int, Meta(gt=0, le=10_000_000)] = 4096
    """Tokens the model may generate per call (sent as `max_tokens`); 1 to 10^7."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    """Request field that carries `max_output_tokens`; OpenAI o-series want max_completion_tokens."""
    temperature: Annotated[float, Meta(ge=0, le=2)] | None = 0.2
    """Sampling temperature, 0 to 2; None leaves it out (reasoning models that reject it)."""
    price_prompt_per_mtok: Annotated[float, Meta(ge=0, le=10_000)] | None = None
    """USD per 1M uncached prompt tokens, 0 to 10000; unset with the other two prices: the shipped table's (ctxagent/llm/prices.json), if it lists the model."""
    price_cached_prompt_per_mtok: Annotated[float, Meta(ge=0, le=10_000)] | None = None
    """USD per 1M prompt tokens served from the provider's cache (cached_tokens), 0 to 10000; unset: the prompt price."""
    price_completion_per_mtok: Annotated[float, Meta(ge=0, le=10_000)] | None = None
    """USD per 1M completion tokens, 0 to 10000 (reasoning tokens included, as providers bill them)."""
    send_reasoning_content: bool = False
    """Send assistant `reasoning_content` back (DeepSeek thinking mode with tools; case C06)."""
    empty_content: Literal["null", "empty"] = "null"
    """Content sent beside tool_calls when there is no text: null (OpenAI) or "" (case C07)."""
    timeout_s: Annotated[float, Meta(gt=0, le=3600)] = 120.0
    """Seconds to wait for connect and for each read (the gap between stream chunks); (0, 3600]."""
    max_retries: Annotated[int, Meta(ge=0, le=20)] = 4
    """Retries after a 429, 5xx, timeout or connection error (attempts = retries + 1); 0 to 20."""
    cache_control: bool = False
    """Mark the end of the stable prefix (the system message and the last history message) with Anthropic-style `cache_control` (OpenRouter, DashScope explicit cache); off: servers that reject unknown fields."""
    extra_body: dict[str, Any] = msgspec.field(default_factory=dict)
    """Extra request fields passed through as given (e.g. llama.cpp grammar, DeepSeek thinking)."""
    protocol: Literal["native", "xml", "react"] = "native"
    """How the model acts: "native" tool calls, or one action per text reply for models served without them: "xml" (`<tool name="...">` blocks) or "react" (`Action: NAME[...]` lines); see docs/protocols.md."""

    def __post_init__(self) -> None:
        """A key given as plain text (code and tests: `ModelSettings(api_key="sk-...")`) becomes a
        Secret, so it never shows in repr. Raises ValueError for an `extra_body` value that is no
        JSON value (a TOML date)."""
        if isinstance(self.api_key, str):
            self.api_key = Secret(self.api_key)
        where = _not_json(self.extra_body, ())
        if where is not None:  # a TOML date or time: the request could not be written
            raise ValueError(f"extra_body: {'.'.join(where)} is a {type(_at(self.extra_body, where)).__name__}, "
                             "which a JSON request cannot carry; write it as a string")

    def __str__(self) -> str:
        return self.__repr__()

    def key_hint(self) -> str:
        """The API key masked for display (`sk-...abcd`), or "(none)"."""
        if self.api_key is None:
            return "(none)"
        return mask(self.api_key.get_secret_value())


def mask(key: str | Secret | None) -> str:
    """Show an API key safely: its prefix up to the first dash and its last 4 characters.

    "sk-proj-abcdef123456" -> "sk-...3456"; keys of 12 characters or fewer -> "***"
    (too short to show any of it); None or "" -> "(none)".
    """
    if isinstance(key, Secret):
        key = key.get_secret_value()
    if not key:
        return "(none)"
    if len(key) <= 12:
        return "***"
    prefix = key.split("-", 1)[0] + "-" if "-" in key[:6] else ""
    return f"{prefix}...{key[-4:]}"


def _not_json(value: Any, loc: tuple[str, ...]) -> tuple[str, ...] | None:
    """Where in `value` the first value that is no JSON value is (None: all are)."""
    if isinstance(value, dict):
        return next((w for k, v in value.items() if (w := _not_json(v, (*loc, str(k)))) is not None), None)
    if isinstance(value, list):
        return next((w for i, v in enumerate(value) if (w := _not_json(v, (*loc, str(i)))) is not None), None)
    return None if value is None or isinstance(value, (str, int, float, bool)) else loc


def _at(value: Any, loc: tuple[str, ...]) -> Any:
    for step in loc:
        value = value[int(step)] if isinstance(value, list) else value[step]
    return value
