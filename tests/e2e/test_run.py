"""The real `ctxagent run` in a subprocess: a whole scripted task on a real repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import API_KEY, APP_PY, model_env
from tests.support.fake_openai import error, text, tool_calls

PATCH = ("*** Begin Patch\n*** Update File: src/app.py\n@@ def greet(name):\n"
         '-    return "hello " + name\n+    return "Hello, " + name + "!"\n*** End Patch\n')
NEW_APP_PY = APP_PY.replace('"hello " + name', '"Hello, " + name + "!"')


def task_script() -> list[dict]:
    return [tool_calls([("terminal", json.dumps({"command": "ls"}))]),
            tool_calls([("terminal", json.dumps({"command": "cat src/app.py"}))]),
            tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]),
            text("Changed the greeting in src/app.py.")]


def transcript(repo: Path) -> list[dict]:
    [path] = list((repo / ".ctxagent" / "sessions").glob("*.jsonl"))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def tool_results(requests: list[dict]) -> list[str]:
    return [m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"]


def test_whole_task_with_yes(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server(task_script())
    proc = ctxagent("run", "Make the greeting friendlier.", "--repo", str(repo), "--yes",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert (repo / "src" / "app.py").read_text(encoding="utf-8") == NEW_APP_PY
    results = tool_results(server.requests())
    assert "README.md" in results[0] and "src" in results[0]  # the real terminal listed the repo
    assert 'return "hello " + name' in results[1]
    assert "src/app.py" in results[2]
    assert "Changed the greeting" in proc.stdout
    records = transcript(repo)
    calls = [c["function"]["name"] for r in records if r["kind"] == "message"
             for c in r["message"].get("tool_calls") or []]
    assert calls == ["terminal", "terminal", "apply_patch"]
    assert (repo / ".ctxagent" / ".gitignore").read_text() == "*\n"
    for path in (repo / ".ctxagent").rglob("*"):
        if path.is_file():
            assert API_KEY not in path.read_text(encoding="utf-8", errors="replace"), path
    assert API_KEY not in proc.stdout + proc.stderr


def test_approval_given_on_stdin(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server(task_script())
    proc = ctxagent("run", "Make the greeting friendlier.", "--repo", str(repo), input="y\n",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert (repo / "src" / "app.py").read_text(encoding="utf-8") == NEW_APP_PY
    assert "+    return \"Hello, \" + name + \"!\"" in proc.stdout  # the diff was shown


@pytest.mark.parametrize("stdin, reason", [("n keep it formal\n", "keep it formal"), ("", "input closed")])
def test_refusal_on_stdin_leaves_the_file_and_tells_the_model(ctxagent, fake_server, repo: Path, stdin: str,
                                                              reason: str) -> None:
    server = fake_server(task_script())
    proc = ctxagent("run", "Make the greeting friendlier.", "--repo", str(repo), input=stdin,
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert (repo / "src" / "app.py").read_text(encoding="utf-8") == APP_PY
    assert "declined" in tool_results(server.requests())[2] and reason in tool_results(server.requests())[2]


def test_json_output_is_one_event_per_line(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server(task_script())
    proc = ctxagent("run", "Make the greeting friendlier.", "--repo", str(repo), "--json", "--yes",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "turn_start" and types[-2:] == ["turn_end", "result"]
    assert types.count("tool_call") == 3 and types.count("tool_result") == 3 and "approval_request" in types
    assert events[-1]["exit_code"] == 0 and events[-1]["answer"] == "Changed the greeting in src/app.py."
    assert events[-2]["reason"] == "finished" and events[-2]["steps"] == 4


def test_rate_limit_then_success_finishes(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([error(429, headers={"Retry-After": "0"}), text("fine")])
    proc = ctxagent("run", "hi", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "fine" in proc.stdout and len(server.requests()) == 2


def test_server_500_forever_is_a_clear_model_error(ctxagent, fake_server, repo: Path) -> None:
    (repo / ".ctxagent").mkdir()
    (repo / ".ctxagent" / "config.toml").write_text("[model]\nmax_retries = 1\n", encoding="utf-8")
    server = fake_server([error(500)] * 10)
    proc = ctxagent("run", "hi", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 4
    assert "500" in proc.stderr and "Traceback" not in proc.stderr + proc.stdout
    assert proc.stderr.strip().splitlines()[-1].startswith("ctxagent: error:")


def test_max_steps_exits_3(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([tool_calls([("terminal", '{"command": "ls"}')])] * 5)
    proc = ctxagent("run", "loop", "--repo", str(repo), "--max-steps", "2", extra_env=model_env(server))
    assert proc.returncode == 3 and "max_steps" in proc.stderr


def test_config_errors_exit_2_without_traceback(ctxagent, repo: Path) -> None:
    proc = ctxagent("run", "hi", "--repo", str(repo))
    assert proc.returncode == 2 and "no model provider is configured" in proc.stderr
    (repo / ".ctxagent").mkdir()
    (repo / ".ctxagent" / "config.toml").write_text("[model\n", encoding="utf-8")
    proc = ctxagent("run", "hi", "--repo", str(repo))
    assert proc.returncode == 2 and "config.toml" in proc.stderr and "Traceback" not in proc.stderr


def test_sessions_lists_the_run_and_resume_continues_it(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([text("first answer"), text("second answer")])
    assert ctxagent("run", "first task\nmore", "--repo", str(repo), extra_env=model_env(server)).returncode == 0
    listing = ctxagent("sessions", "--repo", str(repo), "--json")
    [row] = json.loads(listing.stdout)
    assert (row["turns"], row["task"]) == (1, "first task") and row["tokens"] > 0
    proc = ctxagent("run", "second task", "--repo", str(repo), "--resume", "last", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    sent = [m["content"] for m in server.requests()[-1]["messages"] if m["role"] != "system"]
    assert sent == ["first task\nmore", "first answer", "second task"]
