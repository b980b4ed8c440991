"""Trial of 2026-12-02: in a 60-column chat, /help, /usage, /mcp, the banner and an
interrupted turn's line were left to the terminal to wrap, so words broke in two
(`Ma` / `rkdown`, `send a new me` / `ssage`), and /help's `/todo [clear]` row sat one
column left (its padding was counted on the escaped markup). On a terminal these lines
wrap at words now, /help's descriptions under themselves; piped, each stays one whole line."""

from __future__ import annotations

import pty
from pathlib import Path

import pytest

from tests.e2e.conftest import ctxagent_exe, model_env
from tests.e2e.test_chat_tty import ANSI, Terminal
from tests.support.fake_openai import text


def _screen_lines(raw: str) -> list[str]:
    return [line.rstrip() for line in ANSI.sub("", raw).split("\n")]


@pytest.mark.skipif(not hasattr(pty, "fork"), reason="needs a POSIX pseudo-terminal")
def test_chat_at_sixty_columns_wraps_at_words(fake_server, env, repo: Path) -> None:
    server = fake_server([text("hi")])
    term = Terminal([*ctxagent_exe(), "chat", "--repo", str(repo)],
                    {**env, **model_env(server), "TERM": "xterm", "COLUMNS": "60", "LINES": "200"})
    term.expect("›")
    term.send(b"/help\r/usage\r/mcp\r/exit\r")  # typed ahead: rest() keeps everything they print
    shown = term.rest()
    assert term.wait() == 0
    lines = _screen_lines(shown.split("is saved; resume it with")[0])  # that command to copy is never wrapped
    assert all(len(line) <= 60 for line in lines), [line for line in lines if len(line) > 60]
    words = " ".join(" ".join(lines).split())
    for whole in ("then your Markdown commands)", "mode, sandbox, rules and this session's 'always' answers",
                  "side calls and cost of this session", "[mcp_servers.NAME] in config.toml; see docs/mcp.md)"):
        assert whole in words, whole
    starts = {line.index(first) for line in lines for first in ("list the commands", "show the todo board",
                                                                 "compact the conversation") if first in line}
    assert len(starts) == 1, lines  # every description starts in one column

def test_piped_help_keeps_each_command_on_one_line(ctxagent, fake_server, repo: Path) -> None:
    proc = ctxagent("chat", "--repo", str(repo), input="/help\n",
                    extra_env={**model_env(fake_server([])), "COLUMNS": "60"})
    assert proc.returncode == 0, proc.stderr
    [todo] = [line for line in proc.stdout.splitlines() if line.startswith("  /todo [clear]")]
    [help_row] = [line for line in proc.stdout.splitlines() if line.startswith("  /help ")]
    assert todo.endswith("/todo clear removes every item")
    assert todo.index("show the todo board") == help_row.index("list the commands")
