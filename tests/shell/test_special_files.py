"""Reading a FIFO, a socket or a device is refused at once, with what it is: the read would
wait for a writer until the command's 30 s timeout (a case from the ninth session's notes)."""

from __future__ import annotations

import os
import socket
import time

import pytest

from ctxagent.tools.terminal import TerminalTool
from tests.shell.helpers import make_workspace


@pytest.fixture()
def ws(tmp_path):
    ws = make_workspace(tmp_path)
    os.mkfifo(ws / "pipe")
    return ws


@pytest.mark.parametrize("command", ["cat pipe", "head -n 1 pipe", "tail pipe", "nl pipe", "wc -l a.txt pipe",
                                     "grep foo pipe", "rg foo pipe", "sort pipe", "diff a.txt pipe",
                                     "sed -n 1p pipe", "awk 1 pipe", "cat pi*", "grep -f pipe README.md",
                                     "cat src/../pipe"])
def test_reading_a_fifo_is_refused_at_once_naming_it(ws, command):
    tool = TerminalTool(ws, sandbox=False)
    start = time.monotonic()
    result = tool.execute({"command": command})
    assert time.monotonic() - start < 5
    assert not result.ok
    assert "named pipe (FIFO)" in result.content and "pipe' is" in result.content


@pytest.mark.parametrize("command", ["ls -l pipe", "stat pipe", "file pipe", "ls", "grep -r foo .", "rg foo",
                                     "du -a ."])
def test_listing_a_fifo_or_a_folder_holding_one_still_works(ws, command):
    result = TerminalTool(ws, sandbox=False).execute({"command": command})
    assert result.ok, result.content


def test_a_socket_is_refused_as_a_socket(ws):
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(ws / "sock"))
        result = TerminalTool(ws, sandbox=False).execute({"command": "cat sock"})
    finally:
        server.close()
    assert not result.ok and "'sock' is a socket" in result.content


def test_a_regular_file_next_to_a_fifo_is_read(ws):
    result = TerminalTool(ws, sandbox=False).execute({"command": "cat a.txt"})
    assert result.ok and "a 1" in result.content
