"""Provider presets, settings built from them, and the endpoint check behind `ctxagent doctor`.

`PRESETS[name]` is a plain dict (base_url, model, key_env, base_url_env, needs_key,
context_window, ModelSettings defaults, docs). Sources (checked 2026): the OpenAI API
reference, DeepSeek "Thinking Mode", DashScope, Ollama, vLLM and llama.cpp docs
(docs/providers.md, "Presets", "Module notes"). No preset turns cache_control on;
prices live in prices.json.
"""

from __future__ import annotations

import os
from typing import Any, Mapping
from urllib.parse import urlsplit

from ctxagent.errors import ConfigError
from ctxagent.llm.settings import ModelSettings

PRESETS: dict[str, dict[str, Any]] = {
    "openai": {
        "base_url": "https://api.openai.com/v1", "model": "gpt-4o-mini",
        "key_env": ("OPENAI_API_KEY",), "base_url_env": ("OPENAI_BASE_URL",),
        "needs_key": True, "context_window": 128_000, "max_output_tokens": 4096,
        "docs": "https://platform.openai.com/docs/api-reference/chat",
    },
    "deepseek": {
        "base_url": "https://api.deepseek.com/v1", "model": "deepseek-chat",
        "key_env": ("DEEPSEEK_API_KEY",), "base_url_env": ("DEEPSEEK_BASE_URL",),
        "needs_key": True, "context_window": 128_000, "max_output_tokens": 8192,
        "send_reasoning_content": True,
        "docs": "https://api-docs.deepseek.com/guides/thinking_mode",
    },
    "qwen": {
        "base_url": "https://dashscope.aliyuncs.com/compatible-mode/v1", "model": "qwen-plus",
        "key_env": ("DASHSCOPE_API_KEY",), "base_url_env": ("DASHSCOPE_BASE_URL",),
        "needs_key": True, "context_window": 131_072, "max_output_tokens": 8192,
        "docs": "https://help.aliyun.com/zh/model-studio/compatibility-of-openai-with-dashscope",
    },
    "ollama": {
        "base_url": "http://127.0.0.1:11434/v1", "model": "qwen2.5-coder:7b",
        "key_env": ("OLLAMA_API_KEY",), "base_url_env": ("OLLAMA_BASE_URL",),
        "needs_key": False, "context_window": 32_768, "max_output_tokens": 4096,
        "docs": "https://github.com/ollama/ollama/blob/main/docs/openai.md",
    },
    "vllm": {
        "base_url": "http://127.0.0.1:8000/v1", "model": "Qwen/Qwen2.5-Coder-7B-Instruct",
        "key_env": ("VLLM_API_KEY",), "base_url_env": ("VLLM_BASE_URL",),
        "needs_key": False, "context_window": 32_768, "max_output_tokens": 4096,
        "docs": "https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html",
    },
    "llamacpp": {
        "base_url": "http://127.0.0.1:8080/v1", "model": "local",
        "key_env": ("LLAMACPP_API_KEY",), "base_url_env": ("LLAMACPP_BASE_URL",),
        "needs_key": False, "context_window": 8_192, "max_output_tokens": 2048,
        "docs": "https://github.com/ggml-org/llama.cpp/tree/master/tools/server",
    },
}

_SETTING_KEYS = ("context_window", "max_output_tokens", "send_reasoning_content", "empty_content", "cache_control")
NO_KEY_PLACEHOLDER = "no-key"
"""Sent as the bearer token to servers that need none (the SDK insists on some key, and
without an explicit one it would read OPENAI_API_KEY and send it to a third-party host)."""


def preset(name: str) -> dict[str, Any]:
    """The preset called `name`. Raises ConfigError naming the valid presets."""
    try:
        return PRESETS[name]
    except KeyError:
        valid = ", ".join(sorted(PRESETS))
        raise ConfigError(
            f"unknown model provider {name!r}; use one of {valid}, or 'custom' with a base_url",
            setting="model.provider",
        ) from None


def settings_from_preset(
    name: str, *, env: Mapping[str, str] | None = None, **overrides: Any
) -> ModelSettings:
    """ModelSettings for preset `name`: its defaults, then the environment, then `overrides`.

    env: mapping to read key_env / base_url_env from (default os.environ).
    overrides: any ModelSettings field; a None value counts as "not given".
    Raises ConfigError for an unknown preset; ctxagent.validation.Invalid for bad values.
    """
    env = os.environ if env is None else env
    data = preset(name)
    fields: dict[str, Any] = {"provider": name, "model": data["model"], "base_url": data["base_url"]}
    fields.update({k: data[k] for k in _SETTING_KEYS if k in data})
    url = _first_env(env, data["base_url_env"])
    if url:
        fields["base_url"] = url
    key = _first_env(env, data["key_env"])
    if key:
        fields["api_key"] = key
    fields.update({k: v for k, v in overrides.items() if v is not None})
    from ctxagent.validation import validate

    return validate(ModelSettings, fields, strict=True, finite=True)


def _first_env(env: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for var in names:
        value = env.get(var, "").strip()
        if value:
            return value
    return None


def resolve_base_url(settings: ModelSettings) -> str:
    """settings.base_url, else the preset's URL. Raises ConfigError when neither exists."""
    if settings.base_url:
        return settings.base_url.rstrip("/")
    data = PRESETS.get(settings.provider)
    if data is None:
        raise ConfigError(
            f"provider {settings.provider!r} has no preset URL: set model.base_url "
            "(an OpenAI-compatible root such as http://127.0.0.1:8000/v1)",
            setting="model.base_url",
        )
    return data["base_url"]


def resolve_api_key(settings: ModelSettings) -> str:
    """The key to send: settings.api_key, or a placeholder for servers that need none. Raises
    ConfigError, naming the environment variable, when none is set and the request goes to a
    preset host that needs one (api.openai.com, api.deepseek.com, dashscope...)."""
    if settings.api_key is not None and settings.api_key.get_secret_value():
        return settings.api_key.get_secret_value()
    data = PRESETS.get(settings.provider)
    if data is not None and data["needs_key"] and _same_host(resolve_base_url(settings), data["base_url"]):
        var = data["key_env"][0]
        raise ConfigError(
            f"no API key for provider {settings.provider!r}: set {var} in the environment "
            "or model.api_key in config.toml",
            setting="model.api_key",
        )
    return NO_KEY_PLACEHOLDER


def _same_host(url_a: str, url_b: str) -> bool:
    return urlsplit(url_a).hostname == urlsplit(url_b).hostname


def check_endpoint(settings: ModelSettings, *, timeout_s: float = 5.0) -> tuple[bool, str]:
    """GET <base_url>/models with a short timeout, for `ctxagent doctor`; returns (ok, detail):
    how many models it lists and whether settings.model is one, or what failed and what to do
    (`ctxagent.llm.errors`' hint). Never raises for network or HTTP failures; never shows the key."""
    import openai

    from ctxagent.llm.endpoint_errors import for_endpoint
    from ctxagent.llm.errors import classify_exception

    try:
        base_url = resolve_base_url(settings)
        client = openai.OpenAI(
            base_url=base_url, api_key=resolve_api_key(settings), timeout=timeout_s, max_retries=0
        )
        ids = [m.id for m in client.models.list()]
    except ConfigError as exc:
        return False, str(exc)
    except openai.OpenAIError as exc:
        err = str(for_endpoint(classify_exception(exc), settings, base_url))  # a 401 names the key's places
        return False, err if base_url in err else f"{base_url}: {err}"
    listed = "listed" if settings.model in ids else "not listed (the server may still accept it)"
    return True, f"{base_url}: {len(ids)} model(s); {settings.model!r} {listed}"
