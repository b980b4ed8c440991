"""`ServerManager`: the MCP servers of a session on one background event-loop thread, behind a
synchronous API (`start`, `tools`, `call_tool`, `close`) for the agent loop and its threads.

A server that fails to start, times out starting or dies mid-session changes state (failed,
crashed) with a reason and a notice (`take_notices`); the others go on. docs/mcp.md.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ctxagent.errors import ConfigError
from ctxagent.mcp.connection import Connection, RemoteTool
from ctxagent.mcp.environment import server_env, server_headers
from ctxagent.mcp.names import tool_name
from ctxagent.mcp.results import result_text
from ctxagent.mcp.settings import ServerConfig

#: Seconds added to a tool's own timeout before the waiting side gives up on the loop itself.
GRACE_S = 10.0
#: Seconds `close` waits for all connections to shut down (the SDK bounds each stdio shutdown).
CLOSE_S = 15.0


@dataclass(frozen=True)
class ToolEntry:
    """A tool offered to the model: `name` (`mcp__SERVER__TOOL`), its `server`, the server's own `tool` name."""

    name: str
    server: str
    tool: str
    description: str
    input_schema: dict[str, Any]


@dataclass
class ServerStatus:
    """One server: `state` is running, failed, crashed, not started, disabled or stopped; `reason` says why."""

    config: ServerConfig
    state: str
    reason: str = ""
    tools: list[ToolEntry] = field(default_factory=list)


@dataclass(frozen=True)
class CallOutcome:
    """A tool call's result text; `ok` False for an error; `lost` True when the server is gone."""

    ok: bool
    text: str
    lost: bool = False


class ServerManager:
    """The session's servers. `secrets`: strings no server may be given (the API key); `env`:
    the environment servers inherit from (default os.environ). A context manager: `close` on exit."""

    def __init__(self, *, secrets: Iterable[str] = (), env: Mapping[str, str] | None = None) -> None:
        self.secrets = [s for s in secrets if s]
        self.env = env
        self.servers: dict[str, ServerStatus] = {}
        #: Problems with the configuration found before starting (a broken `.mcp.json`...).
        self.problems: list[str] = []
        self._connections: dict[str, tuple[Connection, concurrent.futures.Future]] = {}
        self._notices: list[str] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ServerManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def notice(self, text: str) -> None:
        """Queue `text` for `take_notices` (a problem with the configuration, say)."""
        with self._lock:
            self._notices.append(text)

    def skip(self, config: ServerConfig, state: str, reason: str) -> None:
        """List `config` without starting it (`state` "not started" or "disabled", and why)."""
        self.servers[config.name] = ServerStatus(config, state, reason)

    def start(self, configs: Iterable[ServerConfig]) -> None:
        """Start `configs` together; return once each runs or failed (its `startup_timeout_sec` at most)."""
        todo = []
        for config in configs:
            try:
                env = server_env(config, self.secrets, self.env) if config.transport == "stdio" else {}
                headers = server_headers(config, self.secrets, self.env) if config.transport == "http" else {}
            except ConfigError as exc:
                self._fail(config, "failed", str(exc))
                continue
            todo.append((config, env, headers))
        if not todo:
            return
        loop = self._ensure_loop()
        bound = max(config.startup_timeout_sec for config, _, _ in todo) + GRACE_S
        future = asyncio.run_coroutine_threadsafe(self._start_all(todo), loop)
        try:
            future.result(timeout=bound)
        except concurrent.futures.TimeoutError:
            future.cancel()
        for config, _, _ in todo:
            if config.name not in self.servers:
                self._fail(config, "failed", f"did not start within {config.startup_timeout_sec:g} s")

    def tools(self) -> list[ToolEntry]:
        """The tools of the running servers, in server order."""
        with self._lock:
            return [tool for status in self.servers.values() if status.state == "running" for tool in status.tools]

    def call_tool(self, server: str, tool: str, arguments: dict[str, Any], timeout: float | None = None) -> CallOutcome:
        """Call `tool` of `server` with `arguments`; `timeout` seconds (default its `tool_timeout_sec`).
        Never raises: a server that is gone marks itself crashed (a notice) and `lost` is True."""
        with self._lock:
            status = self.servers.get(server)
            running = status is not None and status.state == "running" and server in self._connections
        if not running:
            why = f"{status.state}: {status.reason}" if status is not None else "not configured"
            return CallOutcome(False, f"MCP server {server!r} is not running ({why})", lost=True)
        connection, _ = self._connections[server]
        seconds = timeout or connection.config.tool_timeout_sec
        loop = self._loop
        if loop is None:
            return CallOutcome(False, f"MCP server {server!r} is not running (the session is closing)", lost=True)
        future = asyncio.run_coroutine_threadsafe(connection.call(tool, arguments, seconds), loop)
        try:
            result = future.result(timeout=seconds + GRACE_S)
        except (concurrent.futures.TimeoutError, asyncio.TimeoutError):
            future.cancel()
            return CallOutcome(False, f"MCP server {server!r}: {tool} timed out after {seconds:g} s")
        except Exception as exc:  # noqa: BLE001 - every failure becomes a result
            return self._call_error(server, tool, exc, seconds)
        return CallOutcome(not getattr(result, "is_error", False), result_text(result))

    def take_notices(self) -> list[str]:
        """The notices since the last call (servers that failed or crashed), oldest first."""
        with self._lock:
            notices, self._notices = self._notices, []
        return notices

    def close(self) -> None:
        """Stop every server (stdin closed, then the process tree ended) and the loop thread."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        waits = []
        for connection, run in self._connections.values():
            loop.call_soon_threadsafe(connection.closing.set)
            waits.append(run)
        concurrent.futures.wait(waits, timeout=CLOSE_S)
        for run in waits:
            run.cancel()
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=CLOSE_S)
        with self._lock:
            for status in self.servers.values():
                if status.state == "running":
                    status.state = "stopped"
            self._connections.clear()

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._loop.run_forever, name="ctxagent-mcp", daemon=True)
            self._thread.start()
        return self._loop

    async def _start_all(self, todo: list[tuple[ServerConfig, dict[str, str], dict[str, str]]]) -> None:
        await asyncio.gather(*(self._start_one(*item) for item in todo))

    async def _start_one(self, config: ServerConfig, env: dict[str, str], headers: dict[str, str]) -> None:
        connection = Connection(config, env=env, headers=headers)
        run = asyncio.ensure_future(connection.run())
        try:
            await asyncio.wait_for(asyncio.shield(connection.ready.wait()), config.startup_timeout_sec)
        except asyncio.TimeoutError:
            run.cancel()
            await asyncio.wait({run}, timeout=GRACE_S)
            self._fail(config, "failed", f"did not start within {config.startup_timeout_sec:g} s (startup_timeout_sec)"
                       + _tail(connection))
            return
        if connection.client is None:
            self._fail(config, "failed", _describe(connection.error) + _tail(connection))
            return
        wrapped: concurrent.futures.Future = concurrent.futures.Future()
        run.add_done_callback(lambda task: wrapped.set_result(None))
        with self._lock:
            self._connections[config.name] = (connection, wrapped)
            self.servers[config.name] = ServerStatus(config, "running", tools=self._entries(config, connection.tools))

    def _entries(self, config: ServerConfig, tools: list[RemoteTool]) -> list[ToolEntry]:
        taken = {tool.name for status in self.servers.values() for tool in status.tools}
        entries = []
        for tool in tools:
            if not config.offers(tool.name):
                continue
            name = tool_name(config.name, tool.name)
            if name in taken:
                self._notices.append(f"MCP server {config.name!r}: tool {tool.name!r} is left out: its name "
                                     f"{name} is taken by another tool")
                continue
            taken.add(name)
            entries.append(ToolEntry(name, config.name, tool.name, tool.description, tool.input_schema))
        return entries

    def _call_error(self, server: str, tool: str, exc: BaseException, seconds: float) -> CallOutcome:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        code = getattr(exc, "code", None) if isinstance(exc, MCPError) else None
        if code == REQUEST_TIMEOUT:
            return CallOutcome(False, f"MCP server {server!r}: {tool} timed out after {seconds:g} s")
        if isinstance(exc, MCPError) and code != CONNECTION_CLOSED:
            return CallOutcome(False, f"MCP server {server!r}: {tool} failed: {exc.error.message}")
        connection, _ = self._connections[server]
        reason = f"the connection was lost during a call to {tool} ({_describe(exc)})" + _tail(connection)
        self._fail(connection.config, "crashed", reason)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(connection.closing.set)
        return CallOutcome(False, f"MCP server {server!r} stopped working: {reason}. Its tools are removed for the "
                                  "rest of this session; go on without them.", lost=True)

    def _fail(self, config: ServerConfig, state: str, reason: str) -> None:
        with self._lock:
            self.servers[config.name] = ServerStatus(config, state, reason)
            self._notices.append(f"MCP server {config.name!r} {state}: {reason}; its tools are not available, "
                                 "the session goes on without them")


def _describe(exc: BaseException | None) -> str:
    """One line for a failure, the innermost of an exception group."""
    while getattr(exc, "exceptions", None):  # an exception group (anyio task groups)
        exc = exc.exceptions[0]  # type: ignore[union-attr]
    if exc is None:
        return "it closed the connection"
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


def _tail(connection: Connection) -> str:
    """What the server said: its last HTTP error status, or the last lines"""
    if connection.http_status is not None:
        return f" (HTTP {connection.http_status} from {connection.config.url})"
    return _stderr_tail(connection)


def _stderr_tail(connection: Connection) -> str:
    """The last lines (at most 3, 300 characters) the server wrote to stderr, as a clause."""
    lines = [line.strip() for line in connection.stderr_tail().splitlines() if line.strip()][-3:]
    return f"; its stderr ends with: {' | '.join(lines)[-300:]}" if lines else ""
