"""Sub-agent definitions: Markdown files with YAML front matter (Claude Code's `.claude/agents/`
format: `name`, `description` required; `tools`, `model`, `max_steps`; the body is the child's
system prompt; other keys tolerated), plus the built-in `explore` and `general`. docs/subagents.md."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxagent.harness.files import read_text
from ctxagent.harness.skills import load_front_matter, split_front_matter

REPO_AGENT_DIRS = (".ctxagent/agents", ".claude/agents")
MAX_AGENT_BYTES = 64 * 1024
NAME_RE = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*")
#: Claude Code's tool names -> ctxagent's, so its agent files keep their meaning here.
CLAUDE_TOOLS = {"read": "terminal", "grep": "terminal", "glob": "terminal", "ls": "terminal", "bash": "terminal",
                "edit": "apply_patch", "multiedit": "apply_patch", "write": "apply_patch", "task": "delegate",
                "todowrite": "todo", "websearch": None, "webfetch": None, "notebookedit": None}
READ_ONLY_TOOLS = ("terminal", "context_fetch")


@dataclass(frozen=True)
class AgentDefinition:
    """One kind of sub-agent. tools: tool names (None: the parent's, without `delegate`);
    model: a model name, None to inherit; max_steps: None for `[agent] subagent_max_steps`;
    prompt: its system prompt; source: the file, or "built-in"."""

    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None
    model: str | None = None
    max_steps: int | None = None
    source: str = "built-in"
    extra: dict[str, Any] = field(default_factory=dict)


BUILTIN = (
    AgentDefinition("explore", "Read-only exploration: finds where things are and how they work, reports "
                    "the findings with file paths and line numbers. Use it for searches that would read many files.",
                    "You explore a code repository for the agent that delegated to you. You only read: search, "
                    "list and open files. Be thorough but quick.", tools=READ_ONLY_TOOLS),
    AgentDefinition("general", "A general helper with the parent's tools but delegation: for a separate "
                    "sub-task (its changes are approved by the user like the parent's).",
                    "You carry out one sub-task for the agent that delegated to you, with the tools you have."),
)


def discover_agents(repo: Path, user_dir: Path | None) -> tuple[dict[str, AgentDefinition], list[str]]:
    """Definitions by name: the built-ins, then `<user_dir>/agents/`, then the repository's
    folders (a later one of a name wins, as in Claude Code: project over user); warnings for
    the files skipped."""
    found = {d.name: d for d in BUILTIN}
    warnings: list[str] = []
    folders = ([Path(user_dir) / "agents"] if user_dir is not None else []) + [Path(repo) / d for d in REPO_AGENT_DIRS]
    for folder in folders:
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else ():
            got = parse_agent(path)
            if isinstance(got, str):
                warnings.append(f"agent definition {path} skipped: {got}")
            else:
                found[got.name] = got
    return found, warnings


def parse_agent(path: Path) -> AgentDefinition | str:
    """The definition in `path`, or why it cannot be used (one line)."""
    got = read_text(path)
    if got is None:
        return "it cannot be read"
    front, body = split_front_matter(got[0][:MAX_AGENT_BYTES])
    if front is None:
        return "it must start with YAML front matter between --- lines (name, description)"
    meta = load_front_matter(front)
    if isinstance(meta, str):
        return meta
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        return "`name` is required: lower-case letters, digits, - and _"
    if not isinstance(description, str) or not description.strip():
        return "`description` is required (when the parent should use this agent)"
    steps = meta.get("max_steps")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 200):
        return "`max_steps` must be a whole number from 1 to 200"
    model = meta.get("model")
    if model is not None and not isinstance(model, str):
        return "`model` must be a model name, or `inherit`"
    tools = _tools(meta.get("tools"))
    if isinstance(tools, str):
        return tools
    named = {"name", "description", "tools", "model", "max_steps"}
    return AgentDefinition(name=name, description=" ".join(description.split()), prompt=body.strip(), tools=tools,
                           model=None if model in (None, "inherit", "sonnet", "opus", "haiku") else model,
                           max_steps=steps, source=str(path), extra={k: v for k, v in meta.items() if k not in named})


def _tools(value: Any) -> tuple[str, ...] | None | str:
    """`tools` as ctxagent tool names (Claude Code's mapped, unknown ones dropped); None when absent."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [v for v in re.split(r"[,\s]+", value) if v]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return "`tools` must be a list of tool names, or one comma-separated string"
    names: list[str] = []
    for raw in value:
        name = CLAUDE_TOOLS.get(raw.lower(), raw) if raw.lower() in CLAUDE_TOOLS else raw
        if name is not None and name not in names:
            names.append(name)
    return tuple(names)
