"""Issue 15, item 16: how `ctxagent run` shows a turn (the real CLI, on a pseudo-terminal and not).

On a terminal the answer's Markdown is rendered (no `**` or `#` marks left, bullets drawn) and
wrapped at word boundaries, a spinner runs while a tool runs, and a header names the model,
the session and the mode. Piped, the answer is the plain streamed text; with --json, no header.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import ctxagent_exe, model_env
from tests.support.fake_openai import text, tool_calls
from tests.support.screen import screen

ANSWER = ("# Findings\n\nThe **greeting** lives in `src/app.py`; " + "extraordinarily " * 12 +
          "long words end here.\n\n- first point\n- second point\n")
COLOURS = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]")


def on_terminal(argv: list[str], env: dict[str, str], timeout: float = 90) -> tuple[str, int]:
    """Run `argv` on a pseudo-terminal; (everything it wrote, exit code)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(argv[0], argv, env)
    out, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            out += data
    _, status = os.waitpid(pid, 0)
    return out.decode("utf-8", "replace"), os.waitstatus_to_exitcode(status)


def script() -> list[dict]:
    return [tool_calls([("terminal", json.dumps({"command": "cat src/app.py"}))]), text(ANSWER, chunk_size=5)]


@pytest.mark.skipif(not hasattr(pty, "fork"), reason="needs a POSIX pseudo-terminal")
def test_run_on_a_terminal_renders_markdown_and_shows_a_header(fake_server, env, repo: Path) -> None:
    server = fake_server(script())
    raw, code = on_terminal([*ctxagent_exe(), "run", "where is the greeting?", "--repo", str(repo), "--yes"],
                            {**env, **model_env(server), "TERM": "xterm", "COLUMNS": "40"})
    assert code == 0, raw
    lines = screen(raw.replace("\r\n", "\n"))
    shown = "\n".join(lines)
    assert " ".join(shown.split()).startswith("ctxagent run · custom/fake-model · session ")  # wrapped at words
    assert "read-only, patches approved (--yes)" in shown
    assert "Findings" in shown and "# Findings" not in shown and "**" not in shown
    assert "• first point" in shown and "• second point" in shown
    words = [w for line in lines for w in line.split()]
    assert words.count("extraordinarily") == 12  # each word whole: none cut at the edge
    start = next(i for i, line in enumerate(lines) if "Findings" in line)
    end = next(i for i, line in enumerate(lines) if "second point" in line)
    assert all(len(line) <= 40 for line in lines[start:end + 1]), lines[start:end + 1]
    assert "running terminal…" in COLOURS.sub("", raw)  # the spinner while the tool ran (cleared after)
    assert "running terminal…" not in shown


def test_run_piped_prints_the_plain_answer_and_json_has_no_header(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server(script())
    proc = ctxagent("run", "where is the greeting?", "--repo", str(repo), "--yes", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert ANSWER.strip() in proc.stdout  # the Markdown as the model wrote it, for a file or a pipe
    assert proc.stderr.startswith("ctxagent run · custom/fake-model · session ")
    assert "ctxagent run ·" not in proc.stdout
    server = fake_server(script())
    proc = ctxagent("run", "where is the greeting?", "--repo", str(repo), "--yes", "--json", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "ctxagent run ·" not in proc.stdout + proc.stderr
    assert all(json.loads(line) for line in proc.stdout.splitlines())
