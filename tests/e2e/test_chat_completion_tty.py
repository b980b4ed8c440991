"""Tab completion in `ctxagent chat` on a real pseudo-terminal: `/` + Tab completes a command
name, `@` + Tab a workspace path; the message is sent as typed (completion only helps typing)."""

from __future__ import annotations

import pty
from pathlib import Path

import pytest

from tests.e2e.conftest import ctxagent_exe, model_env
from tests.e2e.test_chat_tty import Terminal
from tests.support.fake_openai import text


@pytest.mark.skipif(not hasattr(pty, "fork"), reason="needs a POSIX pseudo-terminal")
def test_tab_completes_commands_and_paths(fake_server, env, repo: Path) -> None:
    (repo / ".claude" / "commands").mkdir(parents=True)
    (repo / ".claude" / "commands" / "reviewit.md").write_text("---\ndescription: Review the code\n---\nReview.\n",
                                                               encoding="utf-8")
    server = fake_server([text("seen the file")])
    term = Terminal([*ctxagent_exe(), "chat", "--repo", str(repo)], {**env, **model_env(server), "TERM": "xterm"})
    term.expect("/help for commands")
    term.expect("›")
    term.send(b"look at @src/a")
    term.expect("@src/a")
    term.send(b"\t")  # the only match: src/app.py
    term.expect("app.py")
    term.send(b" please\r")
    term.expect("seen the file")
    term.expect("›")
    term.send(b"/revi")
    term.expect("/revi")
    term.send(b"\t")  # a custom command, completed like a built-in, its help beside it
    term.expect("Review the code")
    term.send(b"\x15")  # Ctrl-U clears the line
    term.send(b"/tod")
    term.expect("/tod")
    term.send(b"\t")
    term.expect("todo")
    term.send(b" clear\r")  # the built-in /todo runs
    term.expect("the board is empty")
    term.expect("›")
    term.send(b"\x04")
    assert term.wait() == 0
    users = [m["content"] for m in server.requests()[-1]["messages"] if m["role"] == "user"]
    assert users == ["look at @src/app.py please"]
