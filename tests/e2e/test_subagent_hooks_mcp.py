"""Sub-agents with the session's hooks and MCP servers (real CLI, fake model, the real stdio MCP
test server): a child's automatic compaction runs the PreCompact hooks with a payload naming
the child, and an objection is shown as for the main agent; a child calls an MCP tool of the
session, approved as the main agent's call would be, and reads its result; a `tools:` list
without an MCP tool keeps it from the child, as does a read-only definition; a server crashing
in a child's call leaves the child's tools and the session's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e.conftest import flat, model_env
from tests.mcp.servers.launch import STDIO_SERVER
from tests.support.fake_openai import text, tool_calls

SUMMARY = {"contains": "You are compacting", "step": text("## Goal\n- read big.txt\n## Next steps\n- go on\n")}


def _config(env: dict[str, str], body: str = "", hooks: dict | None = None) -> None:
    folder = Path(env["XDG_CONFIG_HOME"]) / "ctxagent"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text("[agent]\nepisodic_memory = false\n" + body, encoding="utf-8")
    if hooks is not None:
        (folder / "hooks.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")


def _calc() -> str:
    return f'[mcp_servers.calc]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(STDIO_SERVER))}]\n'


def _agent(repo: Path, name: str, front: str) -> None:
    folder = repo / ".ctxagent" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(f"---\nname: {name}\ndescription: helps\n{front}---\nHelp.\n", encoding="utf-8")


def _delegate(agent: str, task: str) -> dict:
    return tool_calls([("delegate", json.dumps({"agent": agent, "task": task}))])


def _child_requests(server, marker: str) -> list[dict]:
    return [r for r in server.requests() if any(marker in str(m.get("content")) for m in r["messages"]
                                                if m["role"] == "user") and r.get("tools")]


def _tool_names(body: dict) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def _results(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_a_childs_automatic_compaction_runs_pre_compact_and_its_block_is_honoured(ctxagent, fake_server,
                                                                                   repo: Path, env) -> None:
    """The payload is Claude Code's PreCompact input inside a subagent: the session's id and
    transcript, `trigger` "auto", `agent_id` and `agent_type`, plus the child's own transcript;
    exit 2 blocks the summary, as for the main agent: the user is told, masking does the work."""
    _config(env, 'tools = ["terminal", "delegate"]\n[model]\ncontext_window = 6000\nmax_output_tokens = 500\n',
            hooks={"PreCompact": [{"matcher": "auto", "hooks": [{"type": "command", "command":
                   "cat > ../precompact.json; echo 'keep the configuration values' >&2; exit 2"}]}]})
    _agent(repo, "reader", "tools: terminal\n")
    (repo / "big.txt").write_text("".join(f"line {i}: the configuration value is {i * 7}\n" for i in range(400)),
                                  encoding="utf-8")
    reads = [tool_calls([("terminal", json.dumps({"command": f"sed -n '{a},{a + 99}p' big.txt"}))])
             for a in range(1, 400, 100)]
    rules = [SUMMARY, {"contains": "TASK-R", "steps": [*reads, *reads, text("## Findings\n- read\n## Not finished\n- none")]}]
    server = fake_server([_delegate("reader", "TASK-R: read big.txt in parts"), text("Read.")], rules=rules)
    proc = ctxagent("run", "Read big.txt.", "--repo", str(repo), "--json", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    [transcript] = (repo / ".ctxagent" / "sessions").glob("*.jsonl")
    parent = transcript.stem
    child = f"{parent}.reader-1"
    payload = json.loads((repo.parent / "precompact.json").read_text(encoding="utf-8"))
    assert payload["hook_event_name"] == "PreCompact" and payload["trigger"] == "auto"
    assert payload["session_id"] == parent and payload["transcript_path"] == str(transcript)
    assert payload["agent_id"] == child and payload["agent_type"] == "reader"
    assert payload["agent_transcript_path"] == str(transcript.parent / parent / f"{child}.jsonl")
    notices = [e["message"] for e in map(json.loads, proc.stdout.splitlines()) if e.get("type") == "notice"]
    assert any(n.startswith(f"[{child}] a PreCompact hook blocked the compaction: keep the configuration values")
               for n in notices), notices
    child_events = [json.loads(line) for line in (transcript.parent / parent / f"{child}.jsonl").read_text().splitlines()]
    methods = [r["event"]["method"] for r in child_events if r.get("kind") == "event"
               and r["event"]["type"] == "compaction"]
    assert all(m == "masking" for m in methods), methods  # no summary was written
    assert not [r for r in server.requests() if "You are compacting" in json.dumps(r["messages"])]


def test_a_child_calls_a_session_mcp_tool_with_the_main_agents_approval(ctxagent, fake_server, repo: Path, env) -> None:
    """A child without `tools:` has the session's MCP tools; its call is asked about as the main
    agent's would be (a refusal's reason reaches the child, nothing reaches the server)."""
    _config(env, _calc())
    child_steps = [tool_calls([("mcp__calc__add", json.dumps({"a": 2, "b": 3}))]),
                   tool_calls([("mcp__calc__echo_env", json.dumps({"name": "HOME"}))]),
                   text("## Findings\n- 2 + 3 = 5\n## Not finished\n- none")]
    server = fake_server([_delegate("general", "TASK-M: add 2 and 3"), text("It is 5.")],
                         rules=[{"contains": "TASK-M", "steps": child_steps}])
    proc = ctxagent("run", "Add 2 and 3.", "--repo", str(repo), input="y\nn: not the environment\n",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    first, second, last = _child_requests(server, "TASK-M")
    assert {"mcp__calc__add", "mcp__calc__echo_env"} <= set(_tool_names(first))
    assert _results(second) == ["2 + 3 = 5"]  # the session's server answered the child
    assert "not the environment" in _results(last)[-1]
    assert flat(proc.stderr).count("Run? [y]es") == 2  # each call asked, as in the main agent
    assert "MCP server calc" in flat(proc.stdout + proc.stderr)  # the child's question shows the server
    [report] = _results(server.requests()[-1])
    assert "2 + 3 = 5" in report


def test_yes_approves_a_childs_call_to_your_own_server_as_the_main_agents(ctxagent, fake_server, repo: Path, env) -> None:
    _config(env, _calc())
    child_steps = [tool_calls([("mcp__calc__add", json.dumps({"a": 1, "b": 1}))]), text("## Findings\n- 2\n")]
    server = fake_server([_delegate("general", "TASK-Y: add"), text("2.")],
                         rules=[{"contains": "TASK-Y", "steps": child_steps}])
    proc = ctxagent("run", "Add.", "--repo", str(repo), "--yes", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert _results(_child_requests(server, "TASK-Y")[-1]) == ["1 + 1 = 2"]
    assert "Run? [y]es" not in proc.stderr


def test_a_tools_list_gives_a_child_only_the_mcp_tools_it_names(ctxagent, fake_server, repo: Path, env) -> None:
    """`tools:` with `mcp__calc__echo_env` gives that one tool; one without MCP names (and the
    read-only `explore`, and `permissionMode: plan`) gives none: a call is an unknown tool."""
    _config(env, _calc())
    _agent(repo, "envreader", "tools: Read, mcp__calc__echo_env\n")
    _agent(repo, "plain", "tools: terminal\n")
    _agent(repo, "planner", "permissionMode: plan\n")
    rules = [{"contains": "TASK-E", "steps": [tool_calls([("mcp__calc__add", json.dumps({"a": 1, "b": 2}))]),
                                              text("## Findings\n- none\n")]},
             *({"contains": f"TASK-{n}", "steps": [text("## Findings\n- none\n")]} for n in ("P", "X", "L"))]
    server = fake_server([tool_calls([("delegate", json.dumps({"agent": a, "task": f"TASK-{n}: look"}))
                                      for a, n in (("envreader", "E"), ("plain", "P"), ("explore", "X"),
                                                   ("planner", "L"))]),
                          text("Looked.")], rules=rules)
    proc = ctxagent("run", "Look.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    first, second = _child_requests(server, "TASK-E")
    assert _tool_names(first) == ["terminal", "mcp__calc__echo_env"]
    assert 'no tool named "mcp__calc__add"' in _results(second)[0]
    for marker in ("TASK-P", "TASK-X", "TASK-L"):
        [request] = _child_requests(server, marker)
        assert not any(n.startswith("mcp__") for n in _tool_names(request)), marker
    [planner] = _child_requests(server, "TASK-L")
    assert set(_tool_names(planner)) <= {"terminal", "context_fetch"}
    assert "mcp__calc__add" in _tool_names(server.requests()[0])  # the main agent has them all


def test_a_server_crashing_in_a_childs_call_leaves_the_child_and_the_session(ctxagent, fake_server, repo: Path,
                                                                              env) -> None:
    """The crashed server's tools leave the child's next requests, and the main agent's; the
    session's notice is shown (once the delegation returns)."""
    _config(env, _calc())
    child_steps = [tool_calls([("mcp__calc__crash", "{}")]), tool_calls([("mcp__calc__add", json.dumps({"a": 1, "b": 1}))]),
                   text("## Findings\n- the calculator crashed\n")]
    server = fake_server([_delegate("general", "TASK-C: crash it"), text("It crashed.")],
                         rules=[{"contains": "TASK-C", "steps": child_steps}])
    proc = ctxagent("run", "Crash.", "--repo", str(repo), "--yes", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    first, second, last = _child_requests(server, "TASK-C")
    assert "mcp__calc__add" in _tool_names(first)
    assert "MCP server 'calc' stopped working" in _results(second)[0]
    assert not any(n.startswith("mcp__calc__") for n in _tool_names(second))
    assert 'no tool named "mcp__calc__add"' in _results(last)[-1]
    assert not any(n.startswith("mcp__calc__") for n in _tool_names(server.requests()[-1]))
    assert "MCP server 'calc' crashed" in flat(proc.stdout + proc.stderr)
