"""The fake server itself: non-stream replies, default text, and the CLI used by e2e tests."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import openai
import pytest

from tests.support.fake_openai import error, text, tool_calls

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "fake_openai.py"


def test_non_stream_reply_and_default_text(fake_openai):
    server = fake_openai([tool_calls([("ls", "{}")], reasoning="r")], default_text="all done")
    sdk = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    first = sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert first.choices[0].message.tool_calls[0].function.name == "ls"
    assert first.choices[0].message.model_extra["reasoning_content"] == "r"
    second = sdk.chat.completions.create(model="m", messages=[])
    assert second.choices[0].message.content == "all done"
    assert len(server.requests) == 2 and server.requests[0]["model"] == "m"


def test_error_body_can_be_plain_text(fake_openai):
    server = fake_openai([error(500, body="upstream exploded")])
    sdk = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    with pytest.raises(openai.InternalServerError) as info:
        sdk.chat.completions.create(model="m", messages=[])
    assert info.value.response.text == "upstream exploded"


@pytest.mark.timeout(30)
def test_cli_serves_a_script_and_records_requests(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [text("hello from the cli")], "default_text": "bye"}))
    port_file, requests_file = tmp_path / "port", tmp_path / "requests.jsonl"
    proc = subprocess.Popen([sys.executable, str(SCRIPT), "--script", str(script),
                             "--port-file", str(port_file), "--requests-file", str(requests_file)])
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        port = int(port_file.read_text())
        sdk = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-cli", max_retries=0)
        replies = [sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
                   for _ in range(2)]
        assert [r.choices[0].message.content for r in replies] == ["hello from the cli", "bye"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    lines = [json.loads(line) for line in requests_file.read_text().splitlines()]
    assert len(lines) == 2 and lines[0]["body"]["messages"][0]["content"] == "q"
    assert lines[0]["headers"]["authorization"] == "Bearer sk-cli"
