"""ModelSettings (the key never shows), presets, key resolution and the endpoint check."""

from __future__ import annotations

import json
import logging

import pytest

from ctxagent.errors import ConfigError
from ctxagent.llm.client import LLMClient
from ctxagent.llm.presets import (
    NO_KEY_PLACEHOLDER,
    PRESETS,
    check_endpoint,
    resolve_api_key,
    resolve_base_url,
    settings_from_preset,
)
from ctxagent.llm.settings import ModelSettings, mask
from ctxagent.validation import Invalid, Secret, validate
from tests.llm.conftest import TEST_KEY, USER
from tests.support.fake_openai import text

SECRET = "sk-live-VERYSECRET-abcdefghijklmnop"


def test_settings_repr_str_and_dumps_hide_the_key():
    settings = ModelSettings(model="gpt-4o-mini", api_key=SECRET)  # plain text becomes a Secret
    validated = validate(ModelSettings, {"model": "gpt-4o-mini", "api_key": SECRET})
    assert settings == validated and settings.api_key == Secret(SECRET)
    for shown in (repr(settings), str(settings), str(settings.to_dict()),
                  json.dumps(settings.to_dict()), f"{settings}", repr(LLMClient(settings))):
        assert "VERYSECRET" not in shown
    assert settings.api_key.get_secret_value() == SECRET
    assert settings.key_hint() == "sk-...mnop"


@pytest.mark.parametrize("key,shown", [
    ("sk-proj-abcdefghijklmnop1234", "sk-...1234"), ("abcdefghijklmnopqrst", "...qrst"),
    ("short-key", "***"), ("", "(none)"), (None, "(none)"),
])
def test_mask(key, shown):
    assert mask(key) == shown


def test_key_does_not_reach_the_logs(fake_openai, make_client, caplog):
    caplog.set_level(logging.DEBUG)
    server = fake_openai([text("ok")])
    make_client(server).chat(USER)
    assert TEST_KEY not in caplog.text
    assert server.request_headers[0]["Authorization"] == f"Bearer {TEST_KEY}"  # sent, only in the header


def test_settings_reject_bad_values_and_unknown_fields():
    with pytest.raises(Invalid) as bad:
        validate(ModelSettings, {"model": "m", "context_window": 0})
    assert bad.value.loc == ("context_window",)
    with pytest.raises(Invalid):
        validate(ModelSettings, {"model": "m", "empty_content": "none"})
    with pytest.raises(Invalid, match="context_windw"):
        validate(ModelSettings, {"model": "m", "context_windw": 1000})
    with pytest.raises(Invalid):
        validate(ModelSettings, {"model": "m", "temperature": float("nan")}, finite=True)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_builds_valid_settings(name):
    settings = settings_from_preset(name, env={})
    data = PRESETS[name]
    assert settings.provider == name and settings.model == data["model"]
    assert resolve_base_url(settings).endswith("/v1")
    assert settings.context_window == data["context_window"] > 0


def test_preset_reads_key_and_base_url_from_env_and_overrides_win():
    env = {"DEEPSEEK_API_KEY": SECRET, "DEEPSEEK_BASE_URL": "http://proxy:9/v1"}
    settings = settings_from_preset("deepseek", env=env, model="deepseek-reasoner", base_url=None)
    assert settings.api_key.get_secret_value() == SECRET
    assert settings.base_url == "http://proxy:9/v1" and settings.model == "deepseek-reasoner"
    assert settings.send_reasoning_content is True  # thinking mode + tools needs it (C06)


def test_presets_named_in_the_brief():
    assert PRESETS["openai"]["base_url"] == "https://api.openai.com/v1"
    assert PRESETS["deepseek"]["base_url"] == "https://api.deepseek.com/v1"
    assert PRESETS["qwen"]["base_url"] == "https://dashscope.aliyuncs.com/compatible-mode/v1"
    assert PRESETS["ollama"]["base_url"] == "http://127.0.0.1:11434/v1"
    assert PRESETS["vllm"]["base_url"] == "http://127.0.0.1:8000/v1"
    assert PRESETS["llamacpp"]["base_url"] == "http://127.0.0.1:8080/v1"
    assert PRESETS["qwen"]["key_env"] == ("DASHSCOPE_API_KEY",)


def test_unknown_preset_names_the_valid_ones():
    with pytest.raises(ConfigError, match="deepseek"):
        settings_from_preset("nope", env={})


def test_missing_key_for_a_hosted_provider_says_which_variable_to_set():
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        resolve_api_key(settings_from_preset("openai", env={}))
    with pytest.raises(ConfigError, match="DASHSCOPE_API_KEY"):
        LLMClient(settings_from_preset("qwen", env={}))


def test_local_servers_and_proxies_need_no_key_and_never_get_the_openai_one(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert resolve_api_key(settings_from_preset("ollama", env={})) == NO_KEY_PLACEHOLDER
    proxied = settings_from_preset("openai", env={"OPENAI_BASE_URL": "http://127.0.0.1:4000/v1"})
    assert resolve_api_key(proxied) == NO_KEY_PLACEHOLDER


def test_custom_provider_without_base_url_is_a_config_error():
    with pytest.raises(ConfigError, match="base_url"):
        resolve_base_url(ModelSettings(provider="custom", model="m"))


def test_check_endpoint_ok_lists_models(fake_openai):
    server = fake_openai(models=["fake-model", "other"])
    ok, detail = check_endpoint(ModelSettings(provider="custom", model="fake-model",
                                              base_url=server.base_url, api_key=SECRET))
    assert ok and "2 model(s)" in detail and "listed" in detail
    assert "VERYSECRET" not in detail
    assert server.log[0]["method"] == "GET" and server.log[0]["path"].endswith("/models")


def test_check_endpoint_reports_an_unreachable_server(fake_openai):
    server = fake_openai()
    url = server.base_url
    server.stop()
    ok, detail = check_endpoint(ModelSettings(provider="custom", model="m", base_url=url), timeout_s=2)
    assert not ok and url in detail and "doctor" in detail


def test_max_tokens_field_and_temperature_are_settings_driven(fake_openai, make_client):
    server = fake_openai([text("a"), text("b")])
    make_client(server, max_tokens_field="max_completion_tokens", temperature=None,
                max_output_tokens=321).chat(USER)
    make_client(server, extra_body={"grammar": "root ::= \"a\""}).chat(USER, tools=[{"type": "function",
        "function": {"name": "ls", "parameters": {"type": "object", "properties": {}}}}])
    first, second = server.requests
    assert first["max_completion_tokens"] == 321 and "max_tokens" not in first
    assert "temperature" not in first and "tools" not in first
    assert second["max_tokens"] == 4096 and second["temperature"] == 0.2
    assert second["grammar"] == "root ::= \"a\"" and second["tools"][0]["function"]["name"] == "ls"
    assert second["stream"] is True and json.dumps(second)
