"""Sub-agents end to end (real CLI, fake model): two `delegate` calls of one reply run at the
same time (the fake server holds both children's first requests until both arrived) and only
their reports reach the parent; a child stopped by its step limit still reports; a failing
child's error is its result while the other goes on; children's transcripts and snapshots
sit beside the parent's, and a resumed parent has the reports, not the children's histories."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from tests.e2e.conftest import ctxagent_exe, model_env
from tests.support.fake_openai import error, text, tool_calls

BOTH = {"name": "children", "count": 2}


def _delegate(*tasks: tuple[str, str]) -> dict:
    return tool_calls([("delegate", json.dumps({"agent": agent, "task": task})) for agent, task in tasks])


def _terminal(command: str, **opts) -> dict:
    return {**tool_calls([("terminal", json.dumps({"command": command}))]), **opts}


def _config(env: dict[str, str], body: str = "") -> None:
    folder = Path(env["XDG_CONFIG_HOME"]) / "ctxagent"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text("[agent]\nepisodic_memory = false\n" + body, encoding="utf-8")


def _tool_results(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def _events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_two_children_run_at_once_and_only_their_reports_reach_the_parent(ctxagent, fake_server, repo: Path, env) -> None:
    _config(env)
    rules = [
        {"contains": "TASK-A", "steps": [_terminal("cat README.md", barrier=BOTH),
                                         text("## Findings\n- `README.md:3`: the project is a greeting program\n"
                                              "## Not finished\n- nothing")]},
        {"contains": "TASK-B", "steps": [_terminal("cat src/app.py", barrier=BOTH),
                                         text("## Findings\n- `src/app.py:1`: `greet(name)` returns \"hello \" + name\n"
                                              "## Not finished\n- nothing")]},
    ]
    server = fake_server([_delegate(("explore", "TASK-A: what is this project?"),
                                    ("explore", "TASK-B: where is the greeting built?")),
                          text("It greets: `src/app.py:1`.")], rules=rules)
    proc = ctxagent("run", "Explain the project.", "--repo", str(repo), "--json", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    requests = server.requests()
    children = [r for r in requests if any("TASK-" in str(m.get("content")) for m in r["messages"] if m["role"] == "user")]
    assert len(children) == 4  # each child: its first request held until the other's arrived, then its report
    assert all([t["function"]["name"] for t in r["tools"]] == ["terminal", "context_fetch"] for r in children)
    last = requests[-1]
    report_a, report_b = _tool_results(last)
    assert "`README.md:3`: the project is a greeting program" in report_a and report_a.startswith("[sub-agent ")
    assert "`src/app.py:1`: `greet(name)` returns" in report_b and "finished in 2 steps" in report_b
    sent = json.dumps(last)
    assert "A tiny greeting program" not in sent and "if __name__" not in sent  # the children's reading stays theirs
    sessions = ctxagent("sessions", "--repo", str(repo))
    [transcript] = (repo / ".ctxagent" / "sessions").glob("*.jsonl")
    parent_id = transcript.stem
    records = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    own = sum(r["usage"]["prompt_tokens"] + r["usage"]["completion_tokens"] for r in records if r.get("usage"))
    end = [e for e in _events(proc.stdout) if e["type"] == "turn_end"][-1]
    assert end["tokens"] > own > 0  # the children's tokens count in the parent's turn
    kids = sorted(p.stem for p in (repo / ".ctxagent" / "sessions" / parent_id).glob("*.jsonl"))
    assert kids == [f"{parent_id}.explore-1", f"{parent_id}.explore-2"]
    assert parent_id in sessions.stdout and ".explore-" not in sessions.stdout  # children are not sessions of their own
    parent = ctxagent("inspect", "last", "--repo", str(repo), "--json")
    assert json.loads(parent.stdout)["subagents"] == [{"session": kids[0], "calls": 2}, {"session": kids[1], "calls": 2}]
    shown = ctxagent("inspect", kids[0], "--repo", str(repo), "--json")
    assert shown.returncode == 0, shown.stderr
    assert "TASK-" in json.dumps(json.loads(shown.stdout)["request"]["messages"])


def test_a_child_stopped_by_its_step_limit_still_reports(ctxagent, fake_server, repo: Path, env) -> None:
    _config(env)
    (repo / ".ctxagent" / "agents").mkdir(parents=True)
    (repo / ".ctxagent" / "agents" / "scanner.md").write_text(
        "---\nname: scanner\ndescription: scans files one by one\ntools: terminal\nmax_steps: 2\n---\nScan every file.\n")
    rules = [{"contains": "TASK-C", "steps": [_terminal("ls"), _terminal("cat README.md"),
                                              text("## Findings\n- `README.md:1`: title\n## Not finished\n- src/ and tests/")]}]
    server = fake_server([_delegate(("scanner", "TASK-C: scan all files")), text("Partly scanned.")], rules=rules)
    proc = ctxagent("run", "Scan.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    [report] = _tool_results(server.requests()[-1])
    assert "stopped by its limit (max_steps) after 2 steps: partial report" in report
    assert "`README.md:1`: title" in report and "src/ and tests/" in report
    wrapup = server.requests()[-2]
    assert wrapup["messages"][-1]["role"] == "user" and "Stop here" in wrapup["messages"][-1]["content"]
    assert not wrapup.get("tools")  # the closing report is asked without tools


def test_a_failing_child_is_a_result_and_the_other_goes_on(ctxagent, fake_server, repo: Path, env) -> None:
    _config(env)
    bad = error(400, {"error": {"message": "this model does not do that", "type": "invalid_request_error"}})
    rules = [{"contains": "TASK-D", "steps": [text("## Findings\n- fine\n## Not finished\n- nothing")]},
             {"contains": "TASK-E", "steps": [bad]}]
    server = fake_server([_delegate(("explore", "TASK-D: look"), ("explore", "TASK-E: look too")), text("One worked.")],
                         rules=rules)
    proc = ctxagent("run", "Look twice.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    good, failed = _tool_results(server.requests()[-1])
    assert "finished in 1 steps" in good and "- fine" in good
    assert "ended: error" in failed and "this model does not do that" in failed


def test_a_resumed_parent_has_the_reports_not_the_childrens_histories(ctxagent, fake_server, repo: Path, env) -> None:
    _config(env)
    rules = [{"contains": "TASK-F", "steps": [_terminal("cat src/app.py"), text("## Findings\n- `src/app.py:1` greet\n"
                                                                                 "## Not finished\n- nothing")]}]
    server = fake_server([_delegate(("explore", "TASK-F: find greet")), text("Found it."), text("Still here.")],
                         rules=rules)
    first = ctxagent("run", "Find greet.", "--repo", str(repo), extra_env=model_env(server))
    assert first.returncode == 0, first.stderr
    again = ctxagent("run", "And then?", "--repo", str(repo), "--resume", "last", extra_env=model_env(server))
    assert again.returncode == 0, again.stderr
    resumed = server.requests()[-1]["messages"]
    assert any(m["role"] == "tool" and "`src/app.py:1` greet" in m["content"] for m in resumed)
    assert "if __name__" not in json.dumps(resumed)  # the child's `cat` output never entered the parent


def test_ctrl_c_stops_every_child(fake_server, env, repo: Path) -> None:
    _config(env)
    slow = text("reading slowly " * 400, chunk_size=2, delay=0.05)  # minutes of streaming unless cancelled
    rules = [{"contains": "TASK-G", "steps": [slow]}, {"contains": "TASK-H", "steps": [slow]}]
    server = fake_server([_delegate(("explore", "TASK-G: read"), ("explore", "TASK-H: read"))], rules=rules)
    proc = subprocess.Popen([*ctxagent_exe(), "run", "Read.", "--repo", str(repo), "--json"],
                            env={**env, **model_env(server)}, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    delegated = 0
    for line in proc.stdout:
        event = json.loads(line)
        delegated += event["type"] == "tool_call" and event["name"] == "delegate"
        if delegated == 2:
            proc.send_signal(signal.SIGINT)
            break
    rest, err = proc.communicate(timeout=60)  # both children cancelled, not streamed to their end
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    [transcript] = (repo / ".ctxagent" / "sessions").glob("*.jsonl")
    results = [json.loads(x)["message"]["content"] for x in transcript.read_text().splitlines()
               if json.loads(x)["kind"] == "message" and json.loads(x)["message"]["role"] == "tool"]
    assert len(results) == 2 and all("interrupted" in r for r in results)
