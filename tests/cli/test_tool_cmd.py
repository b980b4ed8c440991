"""`ctxagent tool NAME 'JSON'`: what it prints is terminal-safe (F8) and never holds the key (F7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_safe_text import _raw_unsafe
from tests.support.cli import invoke

KEY = "sk-TOOLSECRET0123456789abcdef"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("CTXAGENT_API_KEY", KEY)
    repo = tmp_path / "repo"
    repo.mkdir()
    return repo


def _tool(repo: Path, name: str, args: dict, *extra: str):
    return invoke(["tool", name, json.dumps(args), "--repo", str(repo), *extra])


def test_control_chars_in_tool_command_output_are_visible(env: Path) -> None:
    title = "t\x1b]0;PWNED\x07\x9b2J [bold red]x[/]"
    out = _tool(env, "note", {"action": "create", "title": title})
    assert out.exit_code == 0, out.output
    assert _raw_unsafe(out.stdout) == [] and "t\\x1b]0;PWNED\\x07\\x9b2J [bold red]x[/]" in out.stdout
    listed = _tool(env, "note", {"action": "list"}, "--json")
    assert _raw_unsafe(listed.stdout) == []
    assert json.loads(listed.stdout)["data"][0]["title"] == title  # JSON keeps the exact text


def test_secrets_never_reach_state_or_output_through_the_tool_command(env: Path) -> None:
    for name, args in (("note", {"action": "create", "title": f"key {KEY}", "content": KEY}),
                       ("todo", {"action": "add", "content": f"rotate {KEY}"}),
                       ("memory", {"action": "add", "content": f"remember {KEY}"})):
        out = _tool(env, name, args)
        assert out.exit_code == 0, out.output
        assert KEY not in out.output
    for path in (env / ".ctxagent").rglob("*"):
        assert not path.is_file() or KEY.encode() not in path.read_bytes(), path
    listed = _tool(env, "todo", {"action": "list"}, "--json")
    assert KEY not in listed.stdout and "rotate [REDACTED]" in listed.stdout
