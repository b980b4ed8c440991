"""The real `ctxagent tool`, `doctor` and `chat` commands in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import API_KEY, model_env
from tests.support.fake_openai import text


def test_tool_terminal_json(ctxagent, repo: Path) -> None:
    proc = ctxagent("tool", "terminal", '{"command": "ls"}', "--repo", str(repo), "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["ok"] is True and "README.md" in result["content"]


def test_tool_failures_exit_non_zero(ctxagent, repo: Path) -> None:
    refused = ctxagent("tool", "terminal", '{"command": "rm -rf src"}', "--repo", str(repo), "--json")
    assert refused.returncode == 1 and json.loads(refused.stdout)["ok"] is False
    assert (repo / "src").is_dir()
    unknown = ctxagent("tool", "nosuch", "{}", "--repo", str(repo))
    assert unknown.returncode == 2 and "terminal" in unknown.stderr
    bad = ctxagent("tool", "terminal", '{"command": ', "--repo", str(repo))
    assert bad.returncode == 2 and "JSON" in bad.stderr


def test_doctor_masks_the_key_and_checks_the_endpoint(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([])
    proc = ctxagent("doctor", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert API_KEY not in proc.stdout and "sk-...cdef" in proc.stdout
    assert "env CTXAGENT_BASE_URL" in proc.stdout and "ok" in proc.stdout


def test_doctor_reports_an_unreachable_endpoint(ctxagent, repo: Path) -> None:
    proc = ctxagent("doctor", "--repo", str(repo), extra_env={"CTXAGENT_BASE_URL": "http://127.0.0.1:9/v1"})
    assert proc.returncode == 1 and "failed" in proc.stdout


def test_chat_scripted_through_stdin(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([text("hello there"), text("line one and two")])
    proc = ctxagent("chat", "--repo", str(repo), input="hi\n/usage\nline one\\\nand two\n/exit\n",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "hello there" in proc.stdout and "1 turns" in proc.stdout
    assert server.requests()[-1]["messages"][-1]["content"] == "line one\nand two"
