"""Which servers of a session start: all of your own config's, a repository's only once
approved (asked once on a terminal and remembered, or the repository trusted), none when
`[mcp] enabled` is false. `open_servers` returns the started `ServerManager`. docs/mcp.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable, Mapping

from ctxagent.errors import CtxAgentError
from ctxagent.mcp.approvals import ServerApprovals, approvals_path
from ctxagent.mcp.config import PROJECT_FILE, merge_servers, read_project_file
from ctxagent.mcp.manager import ServerManager
from ctxagent.mcp.settings import McpSettings, ServerConfig

Ask = Callable[[str], "str | None"]
QUESTION = "Start this MCP server of the repository? It is asked once per definition. [y]es / [n]o: "
HOW_TO_APPROVE = ("approve it once in `ctxagent chat` on a terminal, or pass --trust-repo-config for this run")


def session_servers(repo: Path, configured: Iterable[ServerConfig], settings: McpSettings,
                    env: Mapping[str, str] | None = None) -> tuple[list[ServerConfig], list[str]]:
    """The servers of a session in `repo`: `configured` ([mcp_servers] tables, user file first), then
    the repository's `.mcp.json` (when `settings.project_file`); and the problems found."""
    project, problems = (read_project_file(Path(repo) / PROJECT_FILE, os.environ if env is None else env)
                         if settings.project_file else ([], []))
    servers, dropped = merge_servers([list(configured), project])
    return servers, problems + dropped


def open_servers(repo: Path, servers: Iterable[ServerConfig], settings: McpSettings, *, repo_trusted: bool,
                 ask: Ask | None = None, interactive: bool = False, secrets: Iterable[str] = (),
                 approvals: ServerApprovals | None = None, env: Mapping[str, str] | None = None,
                 problems: Iterable[str] = ()) -> ServerManager:
    """A ServerManager with `servers` started or listed as not started (and why). A repository's
    server starts when `repo_trusted`, approved before, or approved now through `ask` (only when
    `interactive`: a terminal, never a pipe). Never raises for a server; `problems` become notices."""
    manager = ServerManager(secrets=secrets, env=env)
    manager.problems = list(problems)
    for problem in manager.problems:
        manager.notice(problem)
    approvals = approvals or ServerApprovals(approvals_path(env))
    start = []
    for server in servers:
        why_not = _why_not(repo, server, settings, repo_trusted=repo_trusted, ask=ask if interactive else None,
                           approvals=approvals, manager=manager)
        if why_not is None:
            start.append(server)
        else:
            manager.skip(server, *why_not)
    manager.start(start)
    return manager


def _why_not(repo: Path, server: ServerConfig, settings: McpSettings, *, repo_trusted: bool, ask: Ask | None,
             approvals: ServerApprovals, manager: ServerManager) -> tuple[str, str] | None:
    """None when `server` may start, else (state, reason)."""
    if not settings.enabled:
        return "disabled", "[mcp] enabled = false"
    if not server.enabled:
        return "disabled", f"enabled = false in {server.source}"
    if server.origin == "user" or repo_trusted or approvals.approved(repo, server):
        return None
    if ask is None:
        manager.notice(f"MCP server {server.name!r} of the repository ({server.source}: `{server.target()}`) was not "
                       f"started: it is not approved yet; {HOW_TO_APPROVE}")
        return "not started", f"not approved yet; {HOW_TO_APPROVE}"
    what = "connect to" if server.transport == "http" else "run"
    answer = ask(f"MCP server {server.name!r} from {server.source} would {what}: {server.target()}\n{QUESTION}")
    if (answer or "").strip().lower() not in ("y", "yes"):
        return "not started", "you did not approve it"
    try:
        approvals.remember(repo, server)
    except (OSError, CtxAgentError) as exc:
        manager.notice(f"the approval of MCP server {server.name!r} could not be saved ({exc}); it is asked again "
                       "next time")
    return None
