"""Issue 15, item 6: a server sending malformed SSE data is a model error (exit 4) that says what
the server sent, through the real `ctxagent run` against the fake server; never a crash (exit 70)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import API_KEY, flat, model_env
from tests.support.fake_openai import raw

BROKEN = 'data: {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": "hel\n\n'


@pytest.mark.parametrize("body, quoted", [
    (BROKEN, '{"id": "chatcmpl-1", "choices"'),  # the SDK's JSONDecodeError before
    ("data: [1, 2, 3]\n\n", "[1, 2, 3]"),  # JSON, but no chunk object (an AttributeError before)
    ('data: {"choices": [{"index": 0, "delta": ["x"]}]}\n\n', '"delta": ["x"]'),
])
def test_06_malformed_stream_data_exits_4_quoting_it(ctxagent, fake_server, repo: Path, body, quoted) -> None:
    server = fake_server([raw(body)])
    proc = ctxagent("run", "Say hello.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 4, proc.stdout + proc.stderr
    said = flat(proc.stderr)
    assert "ctxagent: error:" in said and quoted in said and "crashed" not in said
    assert "model.base_url" in said
    assert len(server.requests()) == 1  # not retried: the same server answers the same


def test_06_the_quote_is_redacted_and_cut(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([raw("data: {" + f'"auth": "{API_KEY}", "pad": "' + "z" * 5000 + "\n\n")])
    proc = ctxagent("run", "Say hello.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 4
    assert API_KEY not in proc.stdout + proc.stderr and "zzzz…" in proc.stderr
    assert len(proc.stderr) < 2000


def test_06_json_mode_gets_an_error_event_and_the_result(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([raw(BROKEN)])
    proc = ctxagent("run", "Say hello.", "--repo", str(repo), "--json", extra_env=model_env(server))
    assert proc.returncode == 4
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    [error] = [e for e in events if e["type"] == "error"]
    assert error["kind"] == "UnexpectedReplyError" and "not JSON" in error["message"]
    assert events[-1]["type"] == "result" and events[-1]["exit_code"] == 4
