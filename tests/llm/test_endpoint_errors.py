"""Errors told for the endpoint (issue 15, item 8): the URL that could not be reached, the key
places a 401 points to, and a notice before every retry wait."""

from __future__ import annotations

import socket

import pytest

from ctxagent.llm.client import LLMClient
from ctxagent.llm.endpoint_errors import key_sources
from ctxagent.llm.errors import AuthenticationError, LLMConnectionError, ModelNotFoundError, ServerError
from ctxagent.llm.settings import ModelSettings
from tests.llm.conftest import TEST_KEY, USER
from tests.support.fake_openai import error, text


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_08_a_401_from_a_custom_server_names_ctxagent_api_key_and_says_none_was_sent(fake_openai):
    server = fake_openai([error(401)])
    settings = ModelSettings(provider="custom", model="fake-model", base_url=server.base_url)
    with LLMClient(settings) as client, pytest.raises(AuthenticationError) as info:
        client.chat(USER)
    message = str(info.value)
    assert "CTXAGENT_API_KEY" in message and "no key is set" in message
    assert "OPENAI_API_KEY" not in message and "DEEPSEEK_API_KEY" not in message


def test_08_a_401_for_a_preset_names_its_variable_and_the_masked_key(fake_openai, make_client):
    client = make_client(fake_openai([error(401)]), provider="deepseek")
    with pytest.raises(AuthenticationError) as info:
        client.chat(USER)
    message = str(info.value)
    assert "CTXAGENT_API_KEY" in message and "DEEPSEEK_API_KEY" in message and "OPENAI_API_KEY" not in message
    assert "sk-...abcd" in message and TEST_KEY not in message


def test_key_sources_put_ctxagent_api_key_first():
    assert key_sources(ModelSettings(provider="openai", model="m"))[:2] == ["CTXAGENT_API_KEY", "OPENAI_API_KEY"]


def test_08_connection_error_names_the_url():
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    settings = ModelSettings(provider="custom", model="m", base_url=url, max_retries=0)
    with LLMClient(settings) as client, pytest.raises(LLMConnectionError) as info:
        client.chat(USER)
    assert url in str(info.value)


def test_404_names_the_model_and_the_url(fake_openai, make_client):
    server = fake_openai([error(404)])
    with pytest.raises(ModelNotFoundError) as info:
        make_client(server).chat(USER)
    assert server.base_url in str(info.value) and "'fake-model'" in str(info.value)


def test_08_every_retry_wait_is_told_before_it_starts(fake_openai, make_client):
    server = fake_openai([error(500) for _ in range(4)] + [text("ok")])
    told, slept = [], []
    client = make_client(server, sleep=lambda s: slept.append(s) or told.append("slept"), jitter=lambda b: b)
    reply = client.chat(USER, on_retry=lambda notice: told.append(str(notice)))
    assert reply.content == "ok"
    notices = [f"fake server error 500 (HTTP 500); retrying ({n}/5) in {w} s"
               for n, w in ((2, "0.5"), (3, "1.0"), (4, "2.0"), (5, "4.0"))]
    assert told == [x for notice in notices for x in (notice, "slept")]  # each notice before its wait
    assert slept == [0.5, 1.0, 2.0, 4.0]


def test_no_retry_no_notice(fake_openai, make_client):
    told = []
    with pytest.raises(ServerError):
        make_client(fake_openai([error(500)]), max_retries=0).chat(USER, on_retry=told.append)
    assert told == []


def test_08_doctors_endpoint_check_names_the_key_places_on_a_401(fake_openai):
    from ctxagent.llm.presets import check_endpoint

    server = fake_openai(models_error=401)
    ok, detail = check_endpoint(ModelSettings(provider="custom", model="m", base_url=server.base_url))
    assert not ok and "CTXAGENT_API_KEY" in detail and "no key is set" in detail and detail.count(server.base_url) == 1
    ok, detail = check_endpoint(ModelSettings(provider="custom", model="m",
                                              base_url=f"http://127.0.0.1:{_closed_port()}/v1"))
    assert not ok and detail.startswith("cannot reach http://127.0.0.1:")
