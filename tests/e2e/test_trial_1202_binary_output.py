"""Trial of 2026-12-02: `cat blob.bin` on a 5 KB binary file sent the model 6.6 KB of
escapes and replacement characters (and drew them in the terminal). Binary output (a NUL
byte in its first 8,000 bytes, git's test) past 256 bytes is its first bytes escaped and a
note of its size and what to run instead; text output, and what a pipe makes of the bytes,
are unchanged (real CLI; the fake server as the model)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.e2e.conftest import model_env
from tests.support.fake_openai import text, tool_calls


def _results(server) -> list[str]:
    return [m["content"] for m in server.requests()[-1]["messages"] if m["role"] == "tool"]


def test_binary_output_is_cut_short_with_its_size(ctxagent, fake_server, repo: Path) -> None:
    blob = b"\x7fELF\x02\x01\x01\x00" + os.urandom(4992)
    (repo / "blob.bin").write_bytes(blob)
    (repo / "tiny.bin").write_bytes(b"\xff\xfe\x00")
    commands = ["cat blob.bin", "cat blob.bin | wc -c", "cat tiny.bin", "cat src/app.py"]
    server = fake_server([*(tool_calls([("terminal", json.dumps({"command": c}))]) for c in commands),
                          text("looked")])
    proc = ctxagent("run", "what is blob.bin?", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    binary, counted, tiny, source = _results(server)
    note, preview = binary.split("\n", 1)
    assert note.startswith("[binary output (a NUL byte in its first 8,000 bytes, the test git and grep use): "
                           "5,000 bytes, the first ") and note.endswith("; `file PATH` says what a file is]")
    assert preview.startswith("\\x7fELF\\x02\\x01\\x01\\x00") and len(preview.encode()) <= 256
    assert counted.strip() == "5000"
    assert tiny == "\ufffd\ufffd\\x00"  # a few bytes are shown whole (case T07)
    assert source.startswith("def greet(name):")
    assert "  ✓ [binary output (a NUL byte" in proc.stdout  # the terminal shows the note first
    assert len(proc.stdout) < 2000
