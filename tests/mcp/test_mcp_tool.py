"""The tool adapter: `mcp__SERVER__TOOL` with the server's input schema as its parameters, approval
through a gate (asked; `[mcp] allow` and `--yes` for the user's own servers allow), nothing runs
unapproved, and `McpFollower` removes a lost server's tools with a notice."""

from __future__ import annotations

import pytest

from ctxagent.mcp.manager import ServerManager, ToolEntry
from ctxagent.mcp.names import MAX_NAME, covers, tool_name
from ctxagent.mcp.results import result_text
from ctxagent.mcp.settings import McpSettings
from ctxagent.tools.base import ToolRegistry
from ctxagent.tools.mcp_tool import McpFollower, McpTool, add_mcp_tools, allowed_by
from tests.mcp.conftest import stdio_config


def test_the_servers_tools_are_registered_with_their_schemas_and_asked_about() -> None:
    registry, notices = ToolRegistry(), []
    with ServerManager() as manager:
        manager.start([stdio_config(enabled_tools=["add", "crash"])])
        names = add_mcp_tools(registry, manager, McpSettings(allow=["mcp__calc__cr*"]), auto_approve=False)
        assert names == ["mcp__calc__add", "mcp__calc__crash"]
        add, crash = registry.get("mcp__calc__add"), registry.get("mcp__calc__crash")
        function = add.schema()["function"]
        assert function["name"] == "mcp__calc__add" and function["description"] == "Add two integers."
        assert function["parameters"]["required"] == ["a", "b"]
        gate = add.gate({"a": 1, "b": 2})
        assert gate.ask and gate.key == "mcp__calc__add" and "MCP server calc (user config" in gate.details[0]
        refused = add.execute({"a": 1, "b": 2})  # the gate was not approved
        assert not refused.ok and "needs the user's approval" in refused.content
        add.gate({"a": 1, "b": 2}).approved = True
        assert add.execute({"a": 1, "b": 2}).content == "1 + 2 = 3"
        assert not crash.gate({}).ask  # allowed by the [mcp] allow pattern
        follower = McpFollower(manager, registry, notices.append)
        lost = crash.execute({})
        assert not lost.ok and lost.data["lost"]
        follower.on_event(type("E", (), {"type": "tool_result"})())
        assert registry.names() == [] and len(notices) == 1 and "crashed" in notices[0]


def test_yes_allows_the_users_own_servers_only_and_allow_patterns_match_names() -> None:
    settings = McpSettings(allow=["mcp__docs__*"])
    assert allowed_by("mcp__docs__lookup", "repo", settings, auto_approve=False) == "[mcp] allow mcp__docs__*"
    assert allowed_by("mcp__calc__add", "user", settings, auto_approve=True) == "--yes (a server of your own config)"
    assert allowed_by("mcp__calc__add", "repo", settings, auto_approve=True) == ""
    assert allowed_by("mcp__calc__add", "user", settings, auto_approve=False) == ""


def test_names_keep_to_openais_limits() -> None:
    assert tool_name("my server", "get.page") == "mcp__my_server__get_page"
    long_a, long_b = tool_name("s" * 40, "t" * 40 + "a"), tool_name("s" * 40, "t" * 40 + "b")
    assert len(long_a) == MAX_NAME and long_a != long_b


def test_a_result_without_content_says_so_and_structured_content_is_json() -> None:
    empty = type("R", (), {"content": [], "structured_content": None})()
    structured = type("R", (), {"content": [], "structured_content": {"n": 1}})()
    assert result_text(empty) == "(no output)" and result_text(structured) == '{"n": 1}'


def test_a_tool_without_an_object_schema_gets_empty_parameters_and_a_description() -> None:
    entry = ToolEntry("mcp__x__ping", "x", "ping", "", {})
    function = McpTool(entry, ServerManager()).schema()["function"]
    assert function["parameters"] == {"type": "object", "properties": {}}
    assert function["description"] == "ping (MCP server x)"
    assert not McpTool(entry, ServerManager()).execute(["not", "a", "dict"]).ok


@pytest.mark.parametrize("pattern, covered", [
    ("mcp__calc__add", True), ("mcp__calc", True), ("mcp__calc__*", True), ("mcp__*", True),
    ("mcp__calc__echo_env", False), ("mcp__cal", False), ("mcp__calc__add__x", False), ("terminal", False),
])
def test_a_subagents_tools_entry_covers_mcp_tools_as_claude_code_reads_it(pattern: str, covered: bool) -> None:
    assert covers(pattern, "mcp__calc__add") is covered
