"""A real stdio MCP server written with the `mcp` SDK, for the tests: `add`, `echo_env`,
`image`, `fail` (an error result), `crash` (the process exits mid-call), `slow`."""

from __future__ import annotations

import base64
import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp_types import ImageContent, TextContent

server = MCPServer("calc")


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return f"{a} + {b} = {a + b}"


@server.tool()
def echo_env(name: str) -> str:
    """The value of environment variable `name` in this server, or <unset>."""
    return os.environ.get(name, "<unset>")


@server.tool()
def image() -> list:
    """A caption and a small PNG."""
    return [TextContent(type="text", text="a red dot"),
            ImageContent(type="image", data=base64.b64encode(b"\x89PNG" + b"0" * 96).decode(), mime_type="image/png")]


@server.tool()
def fail(why: str) -> str:
    """Always fails with `why`."""
    raise ValueError(why)


@server.tool()
def crash() -> str:
    """Ends this server's process in the middle of the call."""
    sys.stderr.write("calc: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
def slow(seconds: float) -> str:
    """Sleeps `seconds`, then answers."""
    time.sleep(seconds)
    return "woke up"


if __name__ == "__main__":
    server.run("stdio")
