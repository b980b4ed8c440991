"""MCP servers end to end (the real CLI, the fake model, real MCP servers written with the SDK in
tests/mcp/servers): listed by `ctxagent mcp list`, called with approval, a server crashing mid-call
leaves the session working, a repository's `.mcp.json` starts only when trusted, a server that
never starts is reported and the others go on."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.e2e.conftest import API_KEY, flat, model_env
from tests.mcp.servers.launch import NEVER_READY, STDIO_SERVER, http_server
from tests.support.fake_openai import text, tool_calls

TOKEN = "docs-token-7f3a"


@pytest.fixture
def docs_url(tmp_path: Path) -> Iterator[str]:
    """A real streamable-HTTP MCP server on 127.0.0.1 that wants `Bearer TOKEN`."""
    with http_server(tmp_path, TOKEN) as url:
        yield url


def _user_config(env: dict[str, str], body: str) -> None:
    folder = Path(env["XDG_CONFIG_HOME"]) / "ctxagent"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text("[agent]\nepisodic_memory = false\n\n" + body, encoding="utf-8")


def _calc(extra: str = "") -> str:
    return (f'[mcp_servers.calc]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(STDIO_SERVER))}]\n'
            f'env = {{ CALC_MODE = "exact" }}\n{extra}\n')


def _docs(url: str) -> str:
    return f'[mcp_servers.docs]\nurl = "{url}"\nbearer_token_env_var = "DOCS_TOKEN"\n'


def _results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def test_mcp_list_shows_both_servers_their_state_and_tools(ctxagent, repo: Path, env, docs_url: str) -> None:
    _user_config(env, _calc('enabled_tools = ["add", "echo_env", "crash"]\ndisabled_tools = ["crash"]') + _docs(docs_url)
                 + f'[mcp_servers.stuck]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(NEVER_READY))}]\n'
                 "startup_timeout_sec = 1\n")
    proc = ctxagent("mcp", "list", "--repo", str(repo), "--json", extra_env={"DOCS_TOKEN": TOKEN})
    assert proc.returncode == 0, proc.stderr
    servers = {s["name"]: s for s in json.loads(proc.stdout)["servers"]}
    assert servers["calc"]["state"] == "running"
    assert [t["name"] for t in servers["calc"]["tools"]] == ["mcp__calc__add", "mcp__calc__echo_env"]
    assert servers["docs"]["state"] == "running" and servers["docs"]["transport"] == "http"
    assert [t["name"] for t in servers["docs"]["tools"]] == ["mcp__docs__lookup", "mcp__docs__whoami"]
    assert servers["stuck"]["state"] == "failed"
    assert "did not start within 1 s" in servers["stuck"]["reason"]
    shown = ctxagent("mcp", "list", "--repo", str(repo), extra_env={"DOCS_TOKEN": TOKEN})
    assert shown.returncode == 0, shown.stderr
    assert "calc  running  stdio" in shown.stdout and "mcp__docs__lookup" in shown.stdout
    assert "stuck  failed" in shown.stdout


def test_calls_to_a_stdio_and_an_http_server_are_approved_and_reach_the_model(ctxagent, fake_server, repo: Path,
                                                                            env, docs_url: str) -> None:
    _user_config(env, _calc() + _docs(docs_url))
    server = fake_server([tool_calls([("mcp__calc__add", json.dumps({"a": 2, "b": 3})),
                                      ("mcp__docs__lookup", json.dumps({"topic": "install"})),
                                      ("mcp__calc__echo_env", json.dumps({"name": "CTXAGENT_API_KEY"}))]),
                          text("2 + 3 is 5; install with pip.")])
    proc = ctxagent("run", "Add 2 and 3, and find how to install.", "--repo", str(repo), input="y\nn: not that one\ny\n",
                    extra_env={**model_env(server), "DOCS_TOKEN": TOKEN})
    assert proc.returncode == 0, proc.stderr
    first, last = server.requests()[0], server.requests()[-1]
    calc_add = next(t for t in first["tools"] if t["function"]["name"] == "mcp__calc__add")
    assert set(calc_add["function"]["parameters"]["properties"]) == {"a", "b"}  # the server's input schema
    added, looked_up, echoed = _results(last)
    assert added == "2 + 3 = 5"
    assert "not that one" in looked_up and "pip install" not in looked_up  # refused: never sent to the server
    assert echoed == "<unset>"  # the model's API key is not in a server's environment
    assert flat(proc.stderr).count("Run? [y]es") == 3
    assert API_KEY not in proc.stdout + proc.stderr


def test_yes_approves_calls_to_the_users_own_servers(ctxagent, fake_server, repo: Path, env, docs_url: str) -> None:
    _user_config(env, _calc() + _docs(docs_url))
    server = fake_server([tool_calls([("mcp__docs__whoami", "{}")]), text("It is the docs server.")])
    proc = ctxagent("run", "Who are you?", "--repo", str(repo), "--yes", extra_env={**model_env(server), "DOCS_TOKEN": TOKEN})
    assert proc.returncode == 0, proc.stderr
    assert _results(server.requests()[-1]) == ["docs server on 127.0.0.1"]
    assert "Run? [y]es" not in proc.stderr


def test_a_server_crashing_mid_call_leaves_the_session_working(ctxagent, fake_server, repo: Path, env,
                                                               docs_url: str) -> None:
    _user_config(env, _calc() + _docs(docs_url))
    server = fake_server([tool_calls([("mcp__calc__crash", "{}")]), tool_calls([("mcp__docs__whoami", "{}")]),
                          tool_calls([("mcp__calc__add", json.dumps({"a": 1, "b": 1}))]),
                          text("The calculator is gone; the docs server still answers.")])
    proc = ctxagent("run", "Try the tools.", "--repo", str(repo), "--yes", extra_env={**model_env(server), "DOCS_TOKEN": TOKEN})
    assert proc.returncode == 0, proc.stderr
    requests = server.requests()
    crashed, whoami, add = _results(requests[-1])
    assert "MCP server 'calc' stopped working" in crashed and "crashing on purpose" in crashed
    assert whoami == "docs server on 127.0.0.1"
    assert 'no tool named "mcp__calc__add"' in add  # its tools were removed: a clear error result
    assert "mcp__calc__add" in _tool_names(requests[0])
    assert not any(n.startswith("mcp__calc__") for n in _tool_names(requests[1]))
    assert "mcp__docs__whoami" in _tool_names(requests[1])
    assert "The calculator is gone" in proc.stdout
    assert "MCP server 'calc' crashed" in flat(proc.stdout + proc.stderr)


def _project_file(repo: Path) -> None:
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"repocalc": {
        "command": sys.executable, "args": [str(STDIO_SERVER)],
        "env": {"GREETING": "${GREETING:-hello from the default}", "WHO": "${USER_NAME}"}}}}), encoding="utf-8")


def test_a_repositorys_servers_start_only_when_trusted_never_in_a_pipe(ctxagent, fake_server, repo: Path, env) -> None:
    _user_config(env, "")
    _project_file(repo)
    listed = ctxagent("mcp", "list", "--repo", str(repo), "--json", extra_env={"USER_NAME": "ada"})
    [entry] = json.loads(listed.stdout)["servers"]
    assert entry["state"] == "not started" and "not approved" in entry["reason"] and entry["origin"] == "repo"
    server = fake_server([text("No tools needed.")])
    proc = ctxagent("run", "Hello.", "--repo", str(repo), extra_env={**model_env(server), "USER_NAME": "ada"})
    assert proc.returncode == 0, proc.stderr
    assert not any(n.startswith("mcp__") for n in _tool_names(server.requests()[0]))
    assert "was not started: it is not approved yet" in flat(proc.stdout + proc.stderr)

    server = fake_server([tool_calls([("mcp__repocalc__echo_env", json.dumps({"name": "GREETING"})),
                                      ("mcp__repocalc__echo_env", json.dumps({"name": "WHO"}))]), text("ok")])
    proc = ctxagent("run", "Greet.", "--repo", str(repo), "--trust-repo-config", "--yes", input="y\ny\n",
                    extra_env={**model_env(server), "USER_NAME": "ada"})
    assert proc.returncode == 0, proc.stderr
    assert _results(server.requests()[-1]) == ["hello from the default", "ada"]  # ${VAR:-default}, ${VAR}
    assert flat(proc.stderr).count("Run? [y]es") == 2  # --yes does not approve a repository server's calls
