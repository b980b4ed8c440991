"""Fixtures for the model-client tests: a client pointed at a fake server."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from ctxagent.llm.client import LLMClient
from ctxagent.llm.settings import ModelSettings
from tests.support.fake_openai import FakeOpenAI

TEST_KEY = "sk-test-SECRET-0123456789abcd"


@pytest.fixture
def make_client() -> Callable[..., LLMClient]:
    """`make_client(server, **settings_overrides) -> LLMClient` (custom provider, test key)."""
    clients: list[LLMClient] = []

    def make(server: FakeOpenAI, *, sleep: Any = None, jitter: Any = None, **overrides: Any) -> LLMClient:
        fields = {"provider": "custom", "model": "fake-model", "base_url": server.base_url,
                  "api_key": TEST_KEY, **overrides}
        extra = {"jitter": jitter} if jitter is not None else {}
        client = LLMClient(ModelSettings(**fields), sleep=sleep, **extra)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


USER = [{"role": "user", "content": "hi"}]
