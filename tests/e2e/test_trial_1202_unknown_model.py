"""Trial of 2026-12-02: a mistyped model name. DeepSeek answers it with a 400 "Model Not
Exist", which was told as "see the body for the field it names"; a 404 said its status
twice ("Error code: 404 - ... (HTTP 404)"). Both now name the model, the URL and what to
check, with the status said once (real CLI, the fake server as the provider)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import flat
from tests.support.fake_openai import error

DEEPSEEK_400 = {"error": {"message": "Model Not Exist", "type": "invalid_request_error", "param": None,
                          "code": "invalid_request_error"}}
VLLM_404 = {"object": "error", "message": "The model `deepseek-chta` does not exist.", "type": "NotFoundError",
            "code": 404}


@pytest.mark.parametrize("status, body", [(400, DEEPSEEK_400), (404, VLLM_404)], ids=["deepseek-400", "vllm-404"])
def test_a_wrong_model_name_says_so(ctxagent, fake_server, repo: Path, status: int, body: dict) -> None:
    server = fake_server([error(status, body)])
    env = {"CTXAGENT_PROVIDER": "deepseek", "DEEPSEEK_API_KEY": "sk-test-0123456789",
           "DEEPSEEK_BASE_URL": server.base_url, "CTXAGENT_MODEL": "deepseek-chta"}
    proc = ctxagent("run", "hi", "--repo", str(repo), extra_env=env)
    assert proc.returncode == 4, proc.stderr
    out = flat(proc.stdout + proc.stderr)
    assert f"(model 'deepseek-chta' at {server.base_url}) (HTTP {status})." in out
    assert "Check model.model (the server's exact model name)" in out
    assert "Error code:" not in out and "see the body" not in out
    assert len(server.requests()) == 1  # not retried: it will fail the same way


def test_a_400_about_something_else_keeps_its_hint(ctxagent, fake_server, repo: Path) -> None:
    body = {"error": {"message": "temperature must be between 0 and 2", "type": "invalid_request_error"}}
    server = fake_server([error(400, body)])
    env = {"CTXAGENT_BASE_URL": server.base_url, "CTXAGENT_MODEL": "m", "CTXAGENT_API_KEY": "sk-test-0123456789"}
    proc = ctxagent("run", "hi", "--repo", str(repo), extra_env=env)
    assert proc.returncode == 4, proc.stderr
    out = flat(proc.stdout + proc.stderr)
    assert "temperature must be between 0 and 2 (HTTP 400). The server rejected the request" in out
    assert "model.model" not in out
