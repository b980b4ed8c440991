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
