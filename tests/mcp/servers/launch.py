"""Start the test MCP servers: `http_server(folder, token)` runs `http_server.py` in a subprocess
and yields its URL; `STDIO_SERVER` / `NEVER_READY` are the stdio scripts' paths."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

HERE = Path(__file__).resolve().parent
STDIO_SERVER = HERE / "stdio_server.py"
NEVER_READY = HERE / "never_ready.py"
HTTP_SERVER = HERE / "http_server.py"


@contextlib.contextmanager
def http_server(folder: Path, token: str | None = None) -> Iterator[str]:
    """The URL of a running `http_server.py` (answering only `Bearer token` when given); ended on exit."""
    port_file = folder / f"mcp-http-{time.monotonic_ns()}.url"
    proc = subprocess.Popen([sys.executable, str(HTTP_SERVER), str(port_file), *([token] if token else [])],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text(encoding="utf-8"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the MCP HTTP test server did not start")
            time.sleep(0.05)
        yield port_file.read_text(encoding="utf-8")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
