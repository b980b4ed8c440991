"""Sub-agent definitions: Markdown files with YAML front matter (Claude Code's `.claude/agents/`
format: `name`, `description` required; `tools`, `disallowedTools`, `mcpServers`, `model`,
`max_steps`; the body is the child's system prompt; other keys tolerated), plus the built-in
`explore` and `general`. Parsing only: `ctxagent.agent.subagents` applies them. docs/subagents.md."""

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
#: Claude Code's reading tools: the terminal's read-only path here (Bash is the rest of it).
READING = ("read", "grep", "glob", "ls")
_ENTRY = re.compile(r"[^,\s()]+(?:\([^)]*\))?")


@dataclass(frozen=True)
class AgentDefinition:
    """One kind of sub-agent. tools: tool names (None: the parent's, without `delegate`);
    disallowed: tool names and MCP patterns denied; terminal_read_only: `Bash` denied;
    mcp_servers: the session's servers it may use (None: all); model: None to inherit;
    max_steps: None for `[agent] subagent_max_steps`; source: the file, or "built-in"."""

    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None
    model: str | None = None
    max_steps: int | None = None
    source: str = "built-in"
    extra: dict[str, Any] = field(default_factory=dict)
    disallowed: tuple[str, ...] = ()
    terminal_read_only: bool = False
    mcp_servers: tuple[str, ...] | None = None
    #: What the file asks that is not done as written (shown once, with the file's name).
    warnings: tuple[str, ...] = ()


BUILTIN = (
    AgentDefinition("explore", "Read-only exploration: finds where things are and how they work, reports "
                    "the findings with file paths and line numbers. Use it for searches that would read many files.",
                    "You explore a code repository for the agent that delegated to you. You only read: search, "
                    "list and open files. Be thorough but quick.", tools=READ_ONLY_TOOLS,
                    terminal_read_only=True),
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
                warnings += [f"agent definition {path}: {text}" for text in got.warnings]
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
    denied = _disallowed(meta.get("disallowedTools"))
    if isinstance(denied, str):
        return denied
    servers = _mcp_servers(meta.get("mcpServers"))
    if isinstance(servers, str):
        return servers
    named = {"name", "description", "tools", "model", "max_steps", "disallowedTools", "mcpServers"}
    return AgentDefinition(name=name, description=" ".join(description.split()), prompt=body.strip(), tools=tools,
                           model=None if model in (None, "inherit", "sonnet", "opus", "haiku") else model,
                           max_steps=steps, source=str(path), extra={k: v for k, v in meta.items() if k not in named},
                           disallowed=denied[0], terminal_read_only=denied[1], mcp_servers=servers[0],
                           warnings=(*denied[2], *servers[1]))


def _names(value: Any, key: str) -> list[str] | str:
    """A list of names, or one comma-separated string (`Bash(git diff:*)` is one entry), as a list."""
    if isinstance(value, str):
        value = _ENTRY.findall(value)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return f"`{key}` must be a list of tool names, or one comma-separated string"
    return [v.strip() for v in value if v.strip()]


def _tools(value: Any) -> tuple[str, ...] | None | str:
    """`tools` as ctxagent tool names (Claude Code's mapped, unknown ones dropped); None when absent."""
    if value is None:
        return None
    value = _names(value, "tools")
    if isinstance(value, str):
        return value
    names: list[str] = []
    for raw in value:
        name = CLAUDE_TOOLS.get(raw.lower(), raw) if raw.lower() in CLAUDE_TOOLS else raw
        if name is not None and name not in names:
            names.append(name)
    return tuple(names)


def _disallowed(value: Any) -> tuple[tuple[str, ...], bool, list[str]] | str:
    """`disallowedTools` as (ctxagent tool names and MCP patterns denied, whether the terminal
    keeps only its read-only path, warnings). `Bash` denied leaves the read-only path (Read,
    Grep, Glob, LS); the terminal goes when those are denied too, or `terminal` is named."""
    if value is None:
        return (), False, []
    value = _names(value, "disallowedTools")
    if isinstance(value, str):
        return value
    denied: list[str] = []
    warnings: list[str] = []
    said: dict[str, str] = {}  # lower-case name -> as written
    for raw in value:
        base = raw.split("(", 1)[0].strip()
        if base != raw:
            warnings.append(f"`disallowedTools: {raw}` denies all of {base} (ctxagent denies whole tools)")
        said.setdefault(base.lower(), base)
        name = CLAUDE_TOOLS.get(base.lower(), base) if base.lower() in CLAUDE_TOOLS else base
        if name not in (None, "terminal", *denied):
            denied.append(name)
    bash = "bash" in said
    whole = "terminal" in said or (bash and all(r in said for r in READING))
    if whole:
        denied.append("terminal")
    reading = [said[r] for r in READING if r in said]
    if reading and not bash and not whole:
        warnings.append(f"`disallowedTools: {', '.join(reading)}` takes nothing away here: the terminal does that "
                        "reading and Bash (not denied) reads too; deny Bash as well, or `terminal`")
    return tuple(denied), bash and not whole, warnings


def _mcp_servers(value: Any) -> tuple[tuple[str, ...] | None, list[str]] | str:
    """`mcpServers` as (server names, warnings): names, or `{name: config}` entries whose server
    is not started (an agent file must not run commands): their name still restricts."""
    if value is None:
        return None, []
    if isinstance(value, str):
        value = _ENTRY.findall(value)
    if isinstance(value, dict):
        value = [{k: v} for k, v in value.items()]
    wrong = "`mcpServers` must be a list of MCP server names (or of `NAME: {config}` entries)"
    if not isinstance(value, list):
        return wrong
    names: list[str] = []
    inline: list[str] = []
    for item in value:
        if isinstance(item, str) and item.strip():
            names.append(item.strip())
        elif isinstance(item, dict) and item and all(isinstance(k, str) for k in item):
            names += list(item)
            inline += list(item)
        else:
            return wrong
    tables = ", ".join(f"[mcp_servers.{n}]" for n in inline)
    warnings = [f"`mcpServers` defines {', '.join(inline)} inline: servers are not started from an agent file; "
                f"define it as {tables} in your ~/.config/ctxagent/config.toml (docs/mcp.md). The name still "
                "limits this agent to the session's server of that name"] if inline else []
    return tuple(dict.fromkeys(names)), warnings
