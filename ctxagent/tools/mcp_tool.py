"""MCP tools as agent tools: `McpTool` (one per server tool, `mcp__SERVER__TOOL`, the server's
input schema as its parameters, approved through a `Gate` like a command) and `McpFollower`,
the sink that turns server failures into notices and removes a lost server's tools.
Approval rules (`[mcp] allow`, `--yes` for your own servers): docs/mcp.md.
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any, Callable, Iterable

from ctxagent.exec.gate import Gate
from ctxagent.mcp.manager import ServerManager, ToolEntry
from ctxagent.mcp.settings import McpSettings
from ctxagent.tools.base import Tool, ToolRegistry, ToolResult
from ctxagent.tools.exec_gate import GatedRuns

#: The parameters of a tool whose server gives no input schema.
EMPTY_SCHEMA = {"type": "object", "properties": {}}


class McpTool(Tool):
    """Tool `entry` of `manager`'s server. `allowed_by`: why calls run without asking ("" asks)."""

    def __init__(self, entry: ToolEntry, manager: ServerManager, *, allowed_by: str = "") -> None:
        self.name = entry.name  # type: ignore[misc]  # per-instance: one class, many tools
        self.description = entry.description or f"{entry.tool} (MCP server {entry.server})"  # type: ignore[misc]
        self.entry = entry
        self.manager = manager
        self.allowed_by = allowed_by
        self.runs = GatedRuns()

    def schema(self) -> dict[str, Any]:
        """The OpenAI `tools` entry, with the server's input schema as the parameters."""
        params = self.entry.input_schema if self.entry.input_schema.get("type") == "object" else EMPTY_SCHEMA
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": params}}

    def gate(self, args: dict[str, Any]) -> Gate:
        """The approval of one call: asked (an "always" covers this tool for the session) unless allowed."""
        config = self.manager.servers[self.entry.server].config
        gate = Gate(self.name, _subject(args), "json", key=self.name,
                    details=[f"MCP server {self.entry.server} ({config.origin} config: {config.source})",
                             f"tool {self.entry.tool}"])
        if self.allowed_by:
            gate.ask, gate.rule = False, self.allowed_by
        return self.runs.hold(gate.subject, gate)

    def execute(self, args: dict[str, Any] | None) -> ToolResult:
        """Call the tool (once its gate is approved); never raises."""
        args = {} if args is None else args
        if not isinstance(args, dict):
            return ToolResult(ok=False, content=f"{self.name}: arguments must be a JSON object")
        try:
            self.runs.check(_subject(args), lambda: self.gate(args))
        except Exception as exc:  # noqa: BLE001 - a refusal is a result
            return ToolResult(ok=False, content=str(exc))
        outcome = self.manager.call_tool(self.entry.server, self.entry.tool, args)
        return ToolResult(ok=outcome.ok, content=outcome.text, data={"server": self.entry.server, "lost": outcome.lost})

    def run(self, args: dict[str, Any] | None) -> Any:
        """Library use: the result text; raises ToolInputError when the call failed."""
        result = self.execute(args)
        if not result.ok:
            from ctxagent.errors import ToolInputError

            raise ToolInputError(result.content)
        return result.content


def allowed_by(name: str, origin: str, settings: McpSettings, *, auto_approve: bool) -> str:
    """Why calls to tool `name` of a server of `origin` run without asking, or "": a `[mcp] allow`
    pattern, or --yes for a server of your own config (as it approves patches)."""
    rule = next((p for p in settings.allow if fnmatch.fnmatchcase(name, p)), None)
    if rule is not None:
        return f"[mcp] allow {rule}"
    return "--yes (a server of your own config)" if auto_approve and origin == "user" else ""


def mcp_tool(entry: ToolEntry, manager: ServerManager, settings: McpSettings, *, auto_approve: bool) -> McpTool:
    """A new McpTool for `entry` of `manager` (the session's live connection), approved by the
    session's rules (`allowed_by`): one per agent, so agents running at once hold their own gates."""
    origin = manager.servers[entry.server].config.origin
    return McpTool(entry, manager, allowed_by=allowed_by(entry.name, origin, settings, auto_approve=auto_approve))


def add_mcp_tools(registry: ToolRegistry, manager: ServerManager, settings: McpSettings, *,
                  auto_approve: bool, entries: Iterable[ToolEntry] | None = None) -> list[str]:
    """Register a McpTool for every tool of `manager`'s running servers (or of `entries`, a
    sub-agent's share of them); their names."""
    names = []
    for entry in manager.tools() if entries is None else entries:
        if registry.get(entry.name) is not None:
            manager.notice(f"MCP tool {entry.name} is left out: the name is taken")
            continue
        registry.register(mcp_tool(entry, manager, settings, auto_approve=auto_approve))
        names.append(entry.name)
    return names


class McpFollower:
    """An agent sink: after each tool result and at each turn start, `notify` every new server
    notice and remove the tools of servers that stopped running from `registry`. Without
    `notify` (a sub-agent's) the notices stay for the session's own follower."""

    def __init__(self, manager: ServerManager, registry: ToolRegistry,
                 notify: Callable[[str], None] | None = None) -> None:
        self.manager = manager
        self.registry = registry
        self.notify = notify

    def flush(self) -> None:
        """Show the pending notices; drop the tools of servers no longer running."""
        running = {tool.name for tool in self.manager.tools()}
        for name in [n for n, tool in self.registry.tools.items() if isinstance(tool, McpTool) and n not in running]:
            del self.registry.tools[name]
        if self.notify is None:
            return
        for text in self.manager.take_notices():
            self.notify(text)

    def on_event(self, event: Any) -> None:
        if getattr(event, "type", "") in ("turn_start", "tool_result"):
            self.flush()


def _subject(args: dict[str, Any]) -> str:
    return json.dumps(args, indent=2, ensure_ascii=False, sort_keys=True)
