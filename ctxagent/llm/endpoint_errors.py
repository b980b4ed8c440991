"""Model errors told in terms of the endpoint they came from (issue 15, item 8).

The error table (`ctxagent.llm.errors`) knows the SDK's exception, not the settings; here a
classified error gets what only the settings know: the URL a connection or a 404 failed on,
and, for a 401, the places this provider's key is read from (CTXAGENT_API_KEY first, then the
preset's own variable, then the config file) and whether any key was sent at all.
"""

from __future__ import annotations

from ctxagent.llm.errors import AuthenticationError, LLMConnectionError, ModelNotFoundError, ProviderError
from ctxagent.llm.presets import PRESETS
from ctxagent.llm.settings import ModelSettings


def key_sources(settings: ModelSettings) -> list[str]:
    """Where the API key of `settings.provider` is read from, highest precedence first."""
    preset = PRESETS.get(settings.provider)
    env = [v for v in (preset["key_env"] if preset else ()) if v != "CTXAGENT_API_KEY"]
    return ["CTXAGENT_API_KEY", *env, "model.api_key (or model.api_key_env) in config.toml"]


def key_hint(settings: ModelSettings) -> str:
    """What to check after a 401: the key sent (masked) or that none was, and where it is read from."""
    sent = (f"the key sent was {settings.key_hint()}" if settings.api_key is not None and
            settings.api_key.get_secret_value() else "no key is set, so none was sent")
    places = ", ".join(key_sources(settings))
    return (f"The server refused the API key: {sent}. For provider {settings.provider!r} ctxagent reads the key "
            f"from {places}; set a key valid for this endpoint there.")


def for_endpoint(err: ProviderError, settings: ModelSettings, base_url: str) -> ProviderError:
    """`err` with the endpoint's facts added (in place; returned for convenience): the URL of a
    connection failure or a 404, the key places of a 401."""
    if isinstance(err, LLMConnectionError) and base_url not in err.message:
        err.message = f"cannot reach {base_url}: {err.message}"
    elif isinstance(err, ModelNotFoundError) and base_url not in err.message:
        err.message = f"{err.message} (model {settings.model!r} at {base_url})"
    elif isinstance(err, AuthenticationError) and err.status == 401:
        err.hint = key_hint(settings)
    return err

