"""Sub-agent definitions read as Claude Code writes them (`.claude/agents/*.md`), with the
built-ins, precedence (repository over user over built-in) and clear reasons for a skipped file."""

from __future__ import annotations

import shutil
from pathlib import Path

from ctxagent.harness.agents import discover_agents, parse_agent

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agents"


def test_a_claude_code_agent_file_keeps_its_meaning() -> None:
    agent = parse_agent(FIXTURES / "code-reviewer.md")
    assert not isinstance(agent, str), agent
    assert agent.name == "code-reviewer" and agent.description.startswith("Expert code review specialist.")
    assert agent.tools == ("terminal",)  # Read, Grep, Glob, Bash: all the read-only terminal here
    assert agent.model is None  # inherit
    assert agent.prompt.startswith("You are a senior code reviewer") and agent.extra == {"color": "blue"}


def test_built_ins_then_user_then_repository(tmp_path: Path) -> None:
    repo, user = tmp_path / "repo", tmp_path / "user"
    (user / "agents").mkdir(parents=True)
    shutil.copy(FIXTURES / "code-reviewer.md", user / "agents" / "code-reviewer.md")
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "explore.md").write_text(
        "---\nname: explore\ndescription: the project's own explorer\nmax_steps: 5\n---\nLook in src/ first.\n")
    found, warnings = discover_agents(repo, user)
    assert set(found) == {"explore", "general", "code-reviewer"} and warnings == []
    assert found["explore"].description == "the project's own explorer" and found["explore"].max_steps == 5
    assert found["general"].source == "built-in" and found["code-reviewer"].source.startswith(str(user))


def test_a_broken_file_is_skipped_with_its_reason(tmp_path: Path) -> None:
    folder = tmp_path / ".ctxagent" / "agents"
    folder.mkdir(parents=True)
    (folder / "a.md").write_text("no front matter\n")
    (folder / "b.md").write_text("---\nname: b\n---\nbody\n")
    (folder / "c.md").write_text("---\nname: c\ndescription: x\nmax_steps: 0\n---\n")
    (folder / "d.md").write_text("---\nname: Bad Name\ndescription: x\n---\n")
    found, warnings = discover_agents(tmp_path, None)
    assert set(found) == {"explore", "general"}
    assert [w.split(" skipped: ")[1] for w in warnings] == [
        "it must start with YAML front matter between --- lines (name, description)",
        "`description` is required (when the parent should use this agent)",
        "`max_steps` must be a whole number from 1 to 200",
        "`name` is required: lower-case letters, digits, - and _"]


def test_disallowed_tools_and_mcp_servers_as_claude_code_writes_them() -> None:
    agent = parse_agent(FIXTURES / "safe-researcher.md")
    assert not isinstance(agent, str), agent
    assert agent.tools is None  # inherits the parent's tools...
    assert agent.disallowed == ("apply_patch",)  # ...but Write and Edit (both apply_patch here)
    assert agent.terminal_read_only is False and agent.mcp_servers == ("github",) and agent.warnings == ()
    assert "disallowedTools" not in agent.extra and "mcpServers" not in agent.extra


def _agent(tmp_path: Path, front: str):
    path = tmp_path / "a.md"
    path.write_text(f"---\nname: a\ndescription: helps\n{front}---\nHelp.\n", encoding="utf-8")
    return parse_agent(path)


def test_denying_bash_keeps_the_read_only_terminal_and_denying_all_its_names_removes_it(tmp_path: Path) -> None:
    bash = _agent(tmp_path, "disallowedTools: Bash\n")
    assert bash.disallowed == () and bash.terminal_read_only is True and bash.warnings == ()
    every = _agent(tmp_path, "disallowedTools: Bash, Read, Grep, Glob, LS\n")
    assert every.disallowed == ("terminal",) and every.terminal_read_only is False
    ours = _agent(tmp_path, "disallowedTools: [terminal, Task, TodoWrite, WebFetch]\n")
    assert ours.disallowed == ("delegate", "todo", "terminal") and ours.terminal_read_only is False
    read = _agent(tmp_path, "disallowedTools: Read, Grep\n")
    assert read.disallowed == () and read.terminal_read_only is False
    [warning] = read.warnings
    assert warning.startswith("`disallowedTools: Read, Grep` takes nothing away here") and "deny Bash" in warning


def test_a_denied_pattern_denies_the_whole_tool_and_mcp_names_are_kept(tmp_path: Path) -> None:
    agent = _agent(tmp_path, "disallowedTools: Bash(git push:*), mcp__github, mcp__slack__post_message, Wrte\n")
    assert agent.disallowed == ("mcp__github", "mcp__slack__post_message", "Wrte")  # Wrte: warned at startup
    assert agent.terminal_read_only is True
    assert agent.warnings == ("`disallowedTools: Bash(git push:*)` denies all of Bash (ctxagent denies whole tools)",)


def test_an_inline_mcp_server_is_not_started_but_still_restricts(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "agents"
    folder.mkdir(parents=True)
    shutil.copy(FIXTURES / "issue-triager.md", folder / "issue-triager.md")
    found, warnings = discover_agents(tmp_path, None)
    triager = found["issue-triager"]
    assert triager.mcp_servers == ("github", "jira") and triager.terminal_read_only is True
    assert triager.tools == ("terminal", "mcp__github__get_issue", "mcp__jira")
    [warning] = warnings
    assert warning.startswith(f"agent definition {folder / 'issue-triager.md'}: `mcpServers` defines jira inline")
    assert "[mcp_servers.jira] in your ~/.config/ctxagent/config.toml (docs/mcp.md)" in warning


def test_wrong_types_skip_the_file_with_their_reason(tmp_path: Path) -> None:
    assert _agent(tmp_path, "disallowedTools: 3\n") == \
        "`disallowedTools` must be a list of tool names, or one comma-separated string"
    assert _agent(tmp_path, "mcpServers: [3]\n") == \
        "`mcpServers` must be a list of MCP server names (or of `NAME: {config}` entries)"
