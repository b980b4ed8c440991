"""`--protocol` on `chat` and `run` through the real entry point (in process) and the fake
server: what the user sees is the thought and the answer, never the protocol's raw text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import invoke
from tests.support.fake_openai import text


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_openai):
    """A clean user environment pointing at a fake server; returns the server factory's server."""
    for name in ("CTXAGENT_PROVIDER", "OPENAI_API_KEY", "DEEPSEEK_API_KEY", "DASHSCOPE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("CTXAGENT_LOCAL_MODEL", "/nonexistent/model.gguf")
    monkeypatch.setenv("CTXAGENT_MODEL", "fake-model")
    monkeypatch.setenv("CTXAGENT_API_KEY", "sk-cli-test-0123456789abcdef")
    monkeypatch.setenv("COLUMNS", "200")

    def start(script):
        server = fake_openai(script)
        monkeypatch.setenv("CTXAGENT_BASE_URL", server.base_url)
        return server

    return start


def test_chat_with_react_shows_the_answer_not_the_action_lines(env, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    server = env([text('Thought: look around\nAction: terminal[{"command": "ls"}]'),
                  text("Thought: done\nAction: Finish[The repo is empty.]")])
    out = invoke(["chat", "--repo", str(repo), "--protocol", "react"], input="what is here?\n/exit\n")
    assert out.exit_code == 0, out.output
    assert "react protocol" in out.stdout and "The repo is empty." in out.stdout and "look around" in out.stdout
    assert "Action:" not in out.stdout and "Finish[" not in out.stdout
    assert "tools" not in server.requests[0]


def test_run_json_with_xml_carries_the_answer_and_the_thought(env, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    env([text("<thinking>nothing to do</thinking>\n<finish>Nothing to change.</finish>")])
    out = invoke(["run", "check", "--repo", str(repo), "--protocol", "xml", "--json"])
    assert out.exit_code == 0, out.output
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert events[-1]["answer"] == "Nothing to change."
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == "Nothing to change."
    assert "nothing to do" in "".join(e["text"] for e in events if e["type"] == "reasoning_delta")
    assert "<finish>" not in out.stdout
