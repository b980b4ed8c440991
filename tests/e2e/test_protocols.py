"""The real `ctxagent run` with each protocol, against the fake server, on a real repository:
the same task (list, read, patch, finish) through native tool calls, XML and ReAct; a
violation corrected; three ending the run; the automatic switch after Ollama's 400."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import model_env, session_snapshots
from tests.e2e.test_run import NEW_APP_PY, PATCH, transcript
from tests.support.fake_openai import error, text, tool_calls

ANSWER = "Changed the greeting in src/app.py."
CALLS = [("terminal", {"command": "ls"}), ("terminal", {"command": "cat src/app.py"}), ("apply_patch", {"patch": PATCH})]
OLLAMA_400 = {"error": {"message": "registry.ollama.ai/library/gemma3:1b does not support tools",
                        "type": "api_error", "param": None, "code": None}}


def xml_step(name: str, args: dict) -> dict:
    return text(f"<thinking>\nnext: {name}\n</thinking>\n<tool name=\"{name}\">{json.dumps(args)}</tool>")


def react_step(name: str, args: dict) -> dict:
    return text(f"Thought: next: {name}\nAction: {name}[{json.dumps(args)}]")


SCRIPTS = {
    "native": [*(tool_calls([(n, json.dumps(a))]) for n, a in CALLS), text(ANSWER)],
    "xml": [*(xml_step(n, a) for n, a in CALLS), text(f"<thinking>done</thinking>\n<finish>{ANSWER}</finish>")],
    "react": [*(react_step(n, a) for n, a in CALLS), text(f"Thought: done\nAction: Finish[{ANSWER}]")],
}


def results(body: dict, protocol: str) -> list[str]:
    if protocol == "native":
        return [m["content"] for m in body["messages"] if m["role"] == "tool"]
    return [m["content"] for m in body["messages"] if m["role"] == "user" and m["content"].startswith("Observation: ")]


@pytest.mark.parametrize("protocol", ["native", "xml", "react"])
def test_the_same_task_through_every_protocol(ctxagent, fake_server, repo: Path, protocol: str) -> None:
    server = fake_server(SCRIPTS[protocol])
    proc = ctxagent("run", "Make the greeting friendlier.", "--repo", str(repo), "--yes", "--protocol", protocol,
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert (repo / "src" / "app.py").read_text(encoding="utf-8") == NEW_APP_PY
    bodies = server.requests()
    observed = results(bodies[-1], protocol)
    assert "README.md" in observed[0] and 'return "hello " + name' in observed[1] and "src/app.py" in observed[2]
    assert ANSWER in proc.stdout and "<finish>" not in proc.stdout and "Action:" not in proc.stdout
    assert ("tools" in bodies[0]) == (protocol == "native")
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for r in transcript(repo)
             if r["kind"] == "message" for c in r["message"].get("tool_calls") or []]
    assert calls == CALLS  # the same native-form history whatever the protocol
    _, snaps, _ = session_snapshots(repo)
    for n, body in enumerate(bodies, 1):  # each snapshot is the request as sent
        sent = [(m["role"], m.get("content")) for m in snaps[n]["request"]["messages"]]
        assert sent == [(m["role"], m.get("content")) for m in body["messages"]], n
        assert snaps[n]["report"].get("protocol", "native") == protocol
    shown = ctxagent("inspect", "last", "--repo", str(repo))
    assert shown.returncode == 0, shown.stderr
    assert (f"protocol {protocol}: the history was sent as text" in " ".join(shown.stdout.split())) == (
        protocol != "native")


def test_a_violation_is_corrected_then_three_end_the_run(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([text("I will list the files."), *SCRIPTS["xml"]])
    proc = ctxagent("run", "Make the greeting friendlier.", "--repo", str(repo), "--yes", "--protocol", "xml",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert (repo / "src" / "app.py").read_text(encoding="utf-8") == NEW_APP_PY
    correction = server.requests()[1]["messages"][-1]["content"]
    assert correction.startswith("Protocol error:") and "no action" in correction and "<finish>" in correction

    server = fake_server([text("hmm"), text("Action: terminal"), text("Observation: I made this up")])
    proc = ctxagent("run", "Again.", "--repo", str(repo), "--protocol", "react", extra_env=model_env(server))
    assert proc.returncode == 4
    assert "broke the react protocol 3 times in a row" in " ".join(proc.stderr.split())
    assert "Traceback" not in proc.stderr + proc.stdout


def test_a_server_without_tools_switches_to_xml_and_a_resume_keeps_it(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([error(400, OLLAMA_400), *SCRIPTS["xml"], text("<finish>second answer</finish>")])
    env = model_env(server)
    proc = ctxagent("run", "Make the greeting friendlier.", "--repo", str(repo), "--yes", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "src" / "app.py").read_text(encoding="utf-8") == NEW_APP_PY
    flat = " ".join(proc.stdout.split())
    assert "does not support tools" in flat and "xml protocol" in flat
    bodies = server.requests()
    assert "tools" in bodies[0] and all("tools" not in b for b in bodies[1:])
    assert [r["protocol"] for r in transcript(repo) if r["kind"] == "protocol"] == ["xml"]

    proc = ctxagent("run", "And now?", "--repo", str(repo), "--resume", "last", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    last = server.requests()[-1]
    assert "tools" not in last and "second answer" in proc.stdout
    assert len(server.requests()) == len(bodies) + 1  # no second refusal: the session remembered


def test_a_python_block_runs_python_exec_with_its_approval(ctxagent, fake_server, repo: Path, env) -> None:
    config = Path(env["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[agent]\nmode = "workspace-write"\n', encoding="utf-8")
    script = [text("<thinking>compute it</thinking>\n<python>\nprint(6 * 7)\n</python>"), text("<finish>42</finish>"),
              text("<python>print('again')</python>"), text("<finish>not run</finish>")]
    server = fake_server(script)
    proc = ctxagent("run", "What is 6 times 7?", "--repo", str(repo), "--protocol", "xml", input="y\n",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "print(6 * 7)" in proc.stdout  # the code was shown for approval
    observation = server.requests()[1]["messages"][-1]["content"]
    assert observation.startswith("Observation: python_exec") and "[stdout]\n42" in observation
    proc = ctxagent("run", "Again.", "--repo", str(repo), "--protocol", "xml", "--resume", "last",
                    input="n not now\n", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    refused = server.requests()[-1]["messages"][-1]["content"]
    assert "declined" in refused and "not now" in refused
