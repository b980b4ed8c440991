"""`ServerManager` against real servers written with the SDK: tools listed and filtered, calls and
their results, a crash mid-call, a startup timeout, a command that does not exist, HTTP with a
bearer token; failures never raise and leave the other servers running."""

from __future__ import annotations

import sys

from ctxagent.mcp.config import parse_server_tables
from ctxagent.mcp.manager import ServerManager
from tests.mcp.conftest import TOKEN, stdio_config
from tests.mcp.servers.launch import NEVER_READY


def test_a_stdio_server_lists_its_tools_and_answers_calls() -> None:
    with ServerManager() as manager:
        manager.start([stdio_config(enabled_tools=["add", "image", "fail", "echo_env"], disabled_tools=["fail"])])
        assert manager.servers["calc"].state == "running"
        assert [t.name for t in manager.tools()] == ["mcp__calc__add", "mcp__calc__echo_env", "mcp__calc__image"]
        add = manager.tools()[0]
        assert (add.tool, add.description) == ("add", "Add two integers.")
        assert set(add.input_schema["properties"]) == {"a", "b"}
        assert manager.call_tool("calc", "add", {"a": 2, "b": 40}).text == "2 + 40 = 42"
        image = manager.call_tool("calc", "image", {})
        assert image.ok and image.text == "a red dot\n[image: image/png, 100 bytes, not shown]"
        bad = manager.call_tool("calc", "add", {"a": "two"})
        assert not bad.ok and not bad.lost and "valid integer" in bad.text
        assert manager.servers["calc"].state == "running"


def test_a_stdio_server_gets_its_env_on_a_safe_base_and_never_the_api_key(monkeypatch) -> None:
    monkeypatch.setenv("CTXAGENT_API_KEY", "sk-test-never-0000")
    monkeypatch.setenv("LANG", "C.UTF-8")
    with ServerManager(secrets=["sk-test-never-0000"]) as manager:
        manager.start([stdio_config(env={"CALC_MODE": "exact"})])
        env = {name: manager.call_tool("calc", "echo_env", {"name": name}).text
               for name in ("CALC_MODE", "CTXAGENT_API_KEY", "LANG")}
    assert env == {"CALC_MODE": "exact", "CTXAGENT_API_KEY": "<unset>", "LANG": "C.UTF-8"}


def test_a_server_crashing_mid_call_is_marked_crashed_and_the_others_go_on(http_url: str) -> None:
    [docs] = parse_server_tables({"docs": {"url": http_url, "bearer_token_env_var": "DOCS_TOKEN"}}, "/u/config.toml")
    with ServerManager(env={"DOCS_TOKEN": TOKEN}) as manager:
        manager.start([stdio_config(), docs])
        assert manager.take_notices() == []
        crashed = manager.call_tool("calc", "crash", {})
        assert not crashed.ok and crashed.lost
        assert "stopped working" in crashed.text and "crashing on purpose" in crashed.text
        assert manager.servers["calc"].state == "crashed"
        again = manager.call_tool("calc", "add", {"a": 1, "b": 1})
        assert again.lost and "is not running (crashed" in again.text
        [notice] = manager.take_notices()
        assert notice.startswith("MCP server 'calc' crashed") and "the session goes on" in notice
        assert [t.server for t in manager.tools()] == ["docs", "docs"]
        assert manager.call_tool("docs", "lookup", {"topic": "usage"}).text == "ctxagent run TASK"


def test_a_server_that_never_answers_fails_at_its_startup_timeout_and_one_that_cannot_run_fails_at_once() -> None:
    [stuck, missing] = parse_server_tables({"stuck": {"command": sys.executable, "args": [str(NEVER_READY)],
                                                      "startup_timeout_sec": 1},
                                            "missing": {"command": "/nonexistent/server"}}, "/u/config.toml")
    with ServerManager() as manager:
        manager.start([stuck, missing, stdio_config()])
        states = {name: (s.state, s.reason) for name, s in manager.servers.items()}
        assert states["stuck"] == ("failed", "did not start within 1 s (startup_timeout_sec)")
        assert states["missing"][0] == "failed" and "/nonexistent/server" in states["missing"][1]
        assert states["calc"] == ("running", "")
        assert len(manager.take_notices()) == 2
        assert manager.call_tool("calc", "add", {"a": 1, "b": 2}).ok


def test_an_http_server_gets_the_bearer_token_and_refuses_without_it(http_url: str) -> None:
    [docs] = parse_server_tables({"docs": {"url": http_url, "bearer_token_env_var": "DOCS_TOKEN",
                                           "startup_timeout_sec": 20}}, "/u/config.toml")
    with ServerManager(env={"DOCS_TOKEN": TOKEN}) as manager:
        manager.start([docs])
        assert manager.call_tool("docs", "whoami", {}).text == "docs server on 127.0.0.1"
    with ServerManager(env={"DOCS_TOKEN": "wrong"}) as manager:
        manager.start([docs])
        assert manager.servers["docs"].state == "failed" and "401" in manager.servers["docs"].reason
    with ServerManager(env={}) as manager:
        manager.start([docs])
        assert "DOCS_TOKEN, which is not set" in manager.servers["docs"].reason


def test_a_definition_that_would_pass_the_api_key_is_refused() -> None:
    [leaky] = parse_server_tables({"leaky": {"url": "http://127.0.0.1:9/mcp", "http_headers": {"X-Key": "sk-9999"}}},
                                  "/r/.mcp.json")
    with ServerManager(secrets=["sk-9999"]) as manager:
        manager.start([leaky, stdio_config(env={"K": "prefix-sk-9999"})])
        assert all(s.state == "failed" and "holds the model's API key" in s.reason for s in manager.servers.values())


def test_a_call_that_outlives_its_timeout_is_an_error_and_the_server_stays() -> None:
    with ServerManager() as manager:
        manager.start([stdio_config(tool_timeout_sec=1)])
        slow = manager.call_tool("calc", "slow", {"seconds": 5})
        assert not slow.ok and not slow.lost and "slow timed out after 1 s" in slow.text
        assert manager.servers["calc"].state == "running"
