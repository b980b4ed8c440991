"""Claude Code's `disallowedTools` and `mcpServers` in agent files (real CLI, fake model, two
real stdio MCP servers): denied tools leave the child (Write and Edit: apply_patch; Bash: the
terminal keeps its read-only path, a command needing approval is refused without a question;
an MCP server or tool), `mcpServers` keeps the child to the session's servers it names, an
inline server definition is never started (a warning says where to define it), and names
that match nothing are warnings while the agent still works; `permissionMode: plan` keeps the
terminal on its read-only path."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e.conftest import flat, model_env
from tests.mcp.servers.launch import STDIO_SERVER
from tests.support.fake_openai import text, tool_calls

REPORT = text("## Findings\n- looked\n## Not finished\n- nothing")


def _config(env: dict[str, str]) -> None:
    folder = Path(env["XDG_CONFIG_HOME"]) / "ctxagent"
    folder.mkdir(parents=True, exist_ok=True)
    servers = "".join(f'[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}\n'
                      f'args = [{json.dumps(str(STDIO_SERVER))}]\n' for name in ("calc", "other"))
    (folder / "config.toml").write_text("[agent]\nepisodic_memory = false\n" + servers, encoding="utf-8")


def _agent(repo: Path, name: str, front: str) -> Path:
    folder = repo / ".claude" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(f"---\nname: {name}\ndescription: helps with {name}\n{front}---\nHelp.\n", encoding="utf-8")
    return path


def _child_requests(server, marker: str) -> list[dict]:
    return [r for r in server.requests() if any(marker in str(m.get("content")) for m in r["messages"]
                                                if m["role"] == "user") and r.get("tools")]


def _tools(body: dict) -> dict[str, dict]:
    return {t["function"]["name"]: t["function"] for t in body.get("tools", [])}


def _terminal(command: str, dangerous: bool = False) -> dict:
    return tool_calls([("terminal", json.dumps({"command": command, "allow_dangerous": dangerous}))])


def test_disallowed_tools_and_mcp_servers_shape_each_childs_tools(ctxagent, fake_server, repo: Path, env) -> None:
    _config(env)
    marker = repo.parent / "inline-server-ran"
    _agent(repo, "reviewer", "disallowedTools: Write, Edit\n")
    _agent(repo, "nobash", "disallowedTools: Bash\n")
    _agent(repo, "calconly", "mcpServers:\n  - calc\n")
    _agent(repo, "fewer", "disallowedTools: mcp__other, mcp__calc__add\n")
    inline = _agent(repo, "inline", f"mcpServers:\n  - other:\n      command: touch\n      args: [{json.dumps(str(marker))}]\n")
    typo = _agent(repo, "typo", "disallowedTools: Wrte, mcp__calc__nosuch\nmcpServers: [nosuch]\n")
    _agent(repo, "planner", "permissionMode: plan\n")
    names = ("reviewer", "nobash", "calconly", "fewer", "inline", "typo", "planner")
    rules = [{"contains": "TASK-nobash", "steps": [_terminal("touch made.txt", dangerous=True),
                                                   _terminal("cat README.md"), REPORT]},
             *({"contains": f"TASK-{n}", "steps": [REPORT]} for n in names if n != "nobash")]
    delegate = tool_calls([("delegate", json.dumps({"agent": n, "task": f"TASK-{n}: look"})) for n in names])
    server = fake_server([delegate, text("Looked.")], rules=rules)
    proc = ctxagent("run", "Look.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    main = set(_tools(server.requests()[0]))
    assert {"apply_patch", "terminal", "mcp__calc__add", "mcp__other__add"} <= main

    [reviewer] = _child_requests(server, "TASK-reviewer")
    assert "apply_patch" not in _tools(reviewer) and {"terminal", "mcp__calc__add"} <= set(_tools(reviewer))

    first, second, third = _child_requests(server, "TASK-nobash")
    terminal = _tools(first)["terminal"]
    assert "Here only: read-only commands" in terminal["description"]
    assert "is not allowed by the definition of the sub-agent 'nobash'; allowed: read-only commands" in \
        [m for m in second["messages"] if m["role"] == "tool"][-1]["content"]
    assert "A tiny greeting program" in [m for m in third["messages"] if m["role"] == "tool"][-1]["content"]
    assert not (repo / "made.txt").exists() and "Run? [y]es" not in proc.stderr  # refused, never asked

    [calconly] = _child_requests(server, "TASK-calconly")
    mcp = {n for n in _tools(calconly) if n.startswith("mcp__")}
    assert mcp and all(n.startswith("mcp__calc__") for n in mcp)

    [fewer] = _child_requests(server, "TASK-fewer")
    mcp = {n for n in _tools(fewer) if n.startswith("mcp__")}
    assert "mcp__calc__echo_env" in mcp and "mcp__calc__add" not in mcp and not any("__other__" in n for n in mcp)

    [restricted] = _child_requests(server, "TASK-inline")
    mcp = {n for n in _tools(restricted) if n.startswith("mcp__")}
    assert mcp and all(n.startswith("mcp__other__") for n in mcp)  # the session's `other`, not the file's
    assert not marker.exists()  # the agent file's command never ran
    shown = flat(proc.stdout + proc.stderr)
    assert shown.count("`mcpServers` defines other inline") == 1
    assert f"agent definition {inline}: `mcpServers` defines other inline: servers are not started from an " \
           "agent file; define it as [mcp_servers.other] in your ~/.config/ctxagent/config.toml" in shown

    [typoed] = _child_requests(server, "TASK-typo")
    assert not any(n.startswith("mcp__") for n in _tools(typoed)) and "terminal" in _tools(typoed)
    assert shown.count(f"agent definition {typo}: no tool is named Wrte, mcp__calc__nosuch") == 1
    assert shown.count(f"agent definition {typo}: `mcpServers` nosuch: no such server in this session") == 1
    [planner] = _child_requests(server, "TASK-planner")  # Claude Code's read-only mode: the read-only path too
    assert "Here only: read-only commands" in _tools(planner)["terminal"]["description"]
    assert len([m for m in server.requests()[-1]["messages"] if m["role"] == "tool"]) == len(names)


def test_the_built_in_explore_child_only_reads(ctxagent, fake_server, repo: Path, env) -> None:
    """`explore` is described as read-only: a command needing approval is refused without a question."""
    _config(env)
    rules = [{"contains": "TASK-explore", "steps": [_terminal("touch made.txt", dangerous=True), REPORT]}]
    delegate = tool_calls([("delegate", json.dumps({"agent": "explore", "task": "TASK-explore: look"}))])
    server = fake_server([delegate, text("Looked.")], rules=rules)
    proc = ctxagent("run", "Look.", "--repo", str(repo), "--mode", "workspace-write", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    first, second = _child_requests(server, "TASK-explore")
    assert set(_tools(first)) == {"terminal", "context_fetch"}
    assert "Here only: read-only commands" in _tools(first)["terminal"]["description"]
    assert "allowed: read-only commands" in [m for m in second["messages"] if m["role"] == "tool"][-1]["content"]
    assert not (repo / "made.txt").exists() and "Run? [y]es" not in proc.stderr
