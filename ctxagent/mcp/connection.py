"""One MCP server's connection, on the manager's event loop: connect (stdio or streamable
HTTP, through the SDK's `Client`), list its tools, serve tool calls, close on request.

`run()` lives as one task for the connection's whole life (the SDK's task groups must be
entered and left in the same task); `ready` is set once the tools are listed or it failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from dataclasses import dataclass, field
from typing import IO, Any, AsyncIterator

from ctxagent.mcp.settings import ServerConfig

#: Bytes of a stdio server's stderr kept to explain a failure.
STDERR_TAIL = 2000
#: tools/list pages read at most (a server that keeps sending cursors is cut off).
MAX_PAGES = 50


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server lists it: its own `name`, `description`, `input_schema` (JSON Schema)."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=dict)


class Connection:
    """The live connection to `config`'s server; `env` (stdio) and `headers` (HTTP) are final."""

    def __init__(self, config: ServerConfig, *, env: dict[str, str] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.config = config
        self.env = env or {}
        self.headers = headers or {}
        self.tools: list[RemoteTool] = []
        self.error: BaseException | None = None
        self.client: Any = None
        self.ready = asyncio.Event()
        self.closing = asyncio.Event()
        self.errlog: IO[str] | None = None
        #: The last HTTP error status the server answered with (401, 404...), to explain a failure.
        self.http_status: int | None = None

    async def run(self) -> None:
        """Connect, list the tools, set `ready`, then hold the connection until `closing`."""
        from mcp import Client

        try:
            async with Client(self._transport()) as client:
                self.tools = await _list_tools(client)
                self.client = client
                self.ready.set()
                await self.closing.wait()
        except BaseException as exc:  # noqa: BLE001 - a failed server is reported, never raised
            self.error = exc
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
        finally:
            self.client = None
            self.ready.set()

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> Any:
        """The `CallToolResult` of `tool`; raises ConnectionError when not connected, MCPError
        (REQUEST_TIMEOUT after `timeout` seconds, CONNECTION_CLOSED, the server's own errors)."""
        if self.client is None:
            raise ConnectionError("not connected")
        return await self.client.call_tool(tool, arguments, read_timeout_seconds=timeout)

    def stderr_tail(self) -> str:
        """The last STDERR_TAIL characters the stdio server wrote to stderr ("" for none)."""
        if self.errlog is None:
            return ""
        try:
            self.errlog.flush()
            self.errlog.seek(0)
            return self.errlog.read()[-STDERR_TAIL:].strip()
        except (OSError, ValueError):
            return ""

    def _transport(self) -> Any:
        if self.config.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            self.errlog = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
            params = StdioServerParameters(command=self.config.command, args=self.config.args, env=self.env,
                                           cwd=self.config.cwd)
            return stdio_client(params, errlog=self.errlog)
        return self._http_transport()

    @contextlib.asynccontextmanager
    async def _http_transport(self) -> AsyncIterator[Any]:
        """The SDK's streamable HTTP transport with our headers on an HTTP client it does not own."""
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async def note_status(response: Any) -> None:
            if response.status_code >= 400:
                self.http_status = response.status_code

        async with httpx2.AsyncClient(headers=self.headers, timeout=httpx2.Timeout(30.0, read=300.0),
                                      event_hooks={"response": [note_status]}) as http:
            async with streamable_http_client(self.config.url, http_client=http) as streams:
                yield streams


async def _list_tools(client: Any) -> list[RemoteTool]:
    tools: list[RemoteTool] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools += [RemoteTool(t.name, t.description or "", dict(t.input_schema or {})) for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            break
    return tools
