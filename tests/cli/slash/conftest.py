"""Slash-command fixtures: a git repository holding Claude Code's documented commands, and
`chat(lines, script)`, the real `ctxagent chat` run in process against a fake model server."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from tests.support.cli import Out, invoke
from tests.support.fake_openai import FakeOpenAI

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "slash" / "claude_docs"
KEY = "sk-slash-SECRET-0123456789abcdef"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A committed git repository made from the fixture; HOME and XDG_* in tmp; no provider variables."""
    for name in list(os.environ):
        if name.startswith(("CTXAGENT_", "OPENAI_", "DEEPSEEK_", "DASHSCOPE_")):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    for name, value in {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                        "XDG_STATE_HOME": str(home / ".state"), "CTXAGENT_LOCAL_MODEL": "/nonexistent/model.gguf",
                        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"}.items():
        monkeypatch.setenv(name, value)
    repo = tmp_path / "proj"
    shutil.copytree(FIXTURE, repo)
    if shutil.which("git"):
        for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "init"]):
            subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return repo


@pytest.fixture
def chat(project: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., tuple[Out, FakeOpenAI]]]:
    """`chat(lines, script=(), rules=()) -> (what it printed, the server)`: one `ctxagent chat`
    in `project`, reading `lines` from stdin, its model a fake server serving `script`."""
    servers: list[FakeOpenAI] = []

    def run(lines: list[str], script: list[dict[str, Any]] = (), rules: list[dict[str, Any]] = ()) -> tuple[Out, FakeOpenAI]:
        server = FakeOpenAI(list(script), rules=list(rules))
        server.start()
        servers.append(server)
        monkeypatch.setenv("CTXAGENT_BASE_URL", server.base_url)
        monkeypatch.setenv("CTXAGENT_MODEL", "fake-model")
        monkeypatch.setenv("CTXAGENT_API_KEY", KEY)
        out = invoke(["chat", "--repo", str(project)], input="".join(f"{line}\n" for line in lines))
        assert KEY not in out.output
        return out, server

    yield run
    for server in servers:
        server.stop()


def flat(text: str) -> str:
    """`text` with every run of white space as one space (rich wraps long lines)."""
    return " ".join(text.split())


def user_messages(body: dict[str, Any]) -> list[str]:
    """The user messages' text of one request body."""
    return [m["content"] for m in body["messages"] if m["role"] == "user" and isinstance(m.get("content"), str)]
