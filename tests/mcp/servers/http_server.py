"""A real streamable-HTTP MCP server written with the `mcp` SDK, on 127.0.0.1, for the tests:
tools `lookup` and `whoami`. It answers only requests bearing `Authorization: Bearer TOKEN`
when a token is given. Run: python http_server.py URL_FILE [TOKEN] (see launch.py)."""

from __future__ import annotations

import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("docs")
PAGES = {"install": "pip install ctxagent", "usage": "ctxagent run TASK"}


@server.tool()
def lookup(topic: str) -> str:
    """The documentation page about `topic` (install, usage)."""
    return PAGES.get(topic, f"no page about {topic}")


@server.tool()
def whoami() -> str:
    """The server's name."""
    return "docs server on 127.0.0.1"


def _guarded(app: Any, token: str | None) -> Any:
    async def guarded(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and token is not None:
            sent = dict(scope.get("headers") or []).get(b"authorization", b"").decode()
            if sent != f"Bearer {token}":
                await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await app(scope, receive, send)

    return guarded


def serve(token: str | None = None) -> tuple[str, uvicorn.Server, threading.Thread]:
    """Start the server in a daemon thread; (url, uvicorn server, thread). Stop: `server.should_exit = True`."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(_guarded(server.streamable_http_app(), token), log_level="warning", lifespan="on")
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    return f"http://127.0.0.1:{port}/mcp", uv, thread


if __name__ == "__main__":
    url, uv, thread = serve(sys.argv[2] if len(sys.argv) > 2 else None)
    while not uv.started:  # listening: only then is the URL published
        time.sleep(0.02)
    tmp = Path(sys.argv[1] + ".tmp")
    tmp.write_text(url, encoding="utf-8")
    tmp.replace(sys.argv[1])
    thread.join()
