"""Issue 15, item 7: a server that ignores `stream: true` and answers one JSON completion is read as
that completion (text and tool calls), and a proxy's HTML page with status 200 says text/html and
base_url, through the real `ctxagent run` against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import flat, model_env
from tests.support.fake_openai import raw, text, tool_calls


def test_07_plain_json_answers_are_used_with_their_tool_calls(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([tool_calls([("terminal", json.dumps({"command": "ls"}))], ignore_stream=True),
                          text("The repository holds README.md and src.", ignore_stream=True)])
    proc = ctxagent("run", "What is here?", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "The repository holds README.md and src." in proc.stdout
    requests = server.requests()
    assert all(r["stream"] is True for r in requests) and len(requests) == 2
    [result] = [m["content"] for m in requests[1]["messages"] if m["role"] == "tool"]
    assert "README.md" in result  # the tool call of the plain reply really ran


def test_07_a_plain_completion_with_a_missing_finish_reason_is_complete(ctxagent, fake_server, repo: Path) -> None:
    body = {"id": "c", "object": "chat.completion", "choices": [{"index": 0, "message": {
        "role": "assistant", "content": "All done."}}]}
    server = fake_server([raw(json.dumps(body), content_type="application/json")])
    proc = ctxagent("run", "Finish.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "All done." in proc.stdout


def test_07_an_html_page_says_text_html_and_to_check_base_url(ctxagent, fake_server, repo: Path) -> None:
    page = "<html><head><title>Corporate proxy: please log in</title></head><body><form>...</form></body></html>"
    server = fake_server([raw(page, content_type="text/html")])
    proc = ctxagent("run", "Say hello.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 4, proc.stdout + proc.stderr
    said = flat(proc.stderr)
    assert "text/html" in said and "Corporate proxy: please log in" in said
    assert server.base_url in said and "model.base_url" in said
    assert "send the request again" not in said and "after 0 chunk" not in said
