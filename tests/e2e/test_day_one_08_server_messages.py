"""Issue 15, item 8, through the real `ctxagent run` against the fake server: a 401 names the key
variables this provider reads, a connection error names the URL, an empty reply is a model error
(exit 4) that says so, and every retry is announced ("retrying (2/5) in 0.0 s"; a `retry` event
with --json), never into the answer."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.e2e.conftest import flat, model_env
from tests.support.fake_openai import error, text


def test_08_a_401_from_a_custom_server_names_ctxagent_api_key(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([error(401)])
    env = {**model_env(server), "OPENAI_API_KEY": "sk-openai-not-sent-0123456789"}
    proc = ctxagent("run", "Say hello.", "--repo", str(repo), extra_env=env)
    assert proc.returncode == 4
    said = flat(proc.stderr)
    assert "CTXAGENT_API_KEY" in said and "For provider 'custom'" in said and "sk-...cdef" in said
    assert "OPENAI_API_KEY" not in said and "sk-openai-not-sent" not in proc.stdout + proc.stderr


def test_08_connection_error_includes_base_url(ctxagent, repo: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    home = repo.parent / "home" / ".config" / "ctxagent"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[model]\nmax_retries = 0\n", encoding="utf-8")
    proc = ctxagent("run", "Say hello.", "--repo", str(repo), extra_env={"CTXAGENT_BASE_URL": url,
                                                                           "CTXAGENT_MODEL": "m"})
    assert proc.returncode == 4
    assert f"cannot reach {url}" in flat(proc.stderr)


def test_08_an_empty_reply_is_a_model_error_that_says_so(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([text("")])
    proc = ctxagent("run", "Say hello.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "the model returned an empty reply: no text and no tool call" in flat(proc.stderr)


def test_08_an_empty_reply_cut_by_the_output_limit_says_so(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([text("", reasoning="long thoughts", finish_reason="length")])
    proc = ctxagent("run", "Say hello.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 4
    assert "cut at model.max_output_tokens" in flat(proc.stderr) and "raise model.max_output_tokens" in flat(proc.stderr).lower()


def test_08_retries_are_announced_not_silent(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([error(500, headers={"Retry-After": "0"}) for _ in range(4)] + [text("Hello there.")])
    proc = ctxagent("run", "Say hello.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    shown = flat(proc.stdout)
    for n in (2, 3, 4, 5):
        assert f"(HTTP 500); retrying ({n}/5) in 0.0 s" in shown
    assert shown.index("retrying (5/5)") < shown.index("Hello there.")


def test_08_json_mode_gets_a_retry_event_per_wait_and_a_clean_answer(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([error(503, headers={"Retry-After": "0"}), error(429, headers={"Retry-After": "0"}),
                          text("Hello there.")])
    proc = ctxagent("run", "Say hello.", "--repo", str(repo), "--json", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    retries = [e for e in events if e["type"] == "retry"]
    assert [(e["attempt"], e["attempts"], e["status"], e["kind"]) for e in retries] == [
        (2, 5, 503, "ServerError"), (3, 5, 429, "RateLimitError")]
    assert events[-1]["answer"] == "Hello there."
