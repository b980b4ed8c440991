"""MCP server definitions from `[mcp_servers.NAME]` tables (Codex's keys) and `.mcp.json`
(Claude Code's format, `${VAR}` / `${VAR:-default}` expanded) into `ServerConfig`s.

A broken `[mcp_servers]` table is a ConfigError (like any setting); a broken `.mcp.json`
or one bad server in it is a problem reported beside the others. docs/mcp.md.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Mapping

from ctxagent.errors import ConfigError
from ctxagent.mcp.expand import expand_all
from ctxagent.mcp.settings import SERVERS_KEY, ServerConfig
from ctxagent.validation import Invalid, validate

PROJECT_FILE = ".mcp.json"
#: Codex's keys (`http_headers` is Codex's name for fixed headers).
TOML_KEYS = ("command", "args", "env", "cwd", "url", "bearer_token_env_var", "http_headers",
             "startup_timeout_sec", "tool_timeout_sec", "enabled_tools", "disabled_tools", "enabled")
#: Claude Code's keys; others in a `.mcp.json` entry are ignored (they are Claude Code's own).
JSON_KEYS = ("type", "command", "args", "env", "url", "headers")


def fingerprint(definition: Mapping[str, Any]) -> str:
    """sha256 hex of a definition as written (before expansion): a changed one asks again."""
    return hashlib.sha256(json.dumps(definition, sort_keys=True, default=str).encode()).hexdigest()


def parse_server_tables(table: Any, source: str, *, origin: str = "user") -> list[ServerConfig]:
    """The servers of one `[mcp_servers]` table of config file `source`. Raises ConfigError
    naming the file, the server and the key (unknown key, wrong type, no command or url)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: {SERVERS_KEY} must be a table of servers, e.g. [{SERVERS_KEY}.docs] "
                          'command = "docs-server"', setting=SERVERS_KEY)
    return [_toml_server(name, entry, source, origin) for name, entry in table.items()]


def _toml_server(name: str, entry: Any, source: str, origin: str) -> ServerConfig:
    where = f"{source}: [{SERVERS_KEY}.{name}]"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a table with command or url", setting=f"{SERVERS_KEY}.{name}")
    unknown = [key for key in entry if key not in TOML_KEYS]
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; the keys are "
                          f"{', '.join(TOML_KEYS)}", setting=f"{SERVERS_KEY}.{name}")
    for key in ("startup_timeout_sec", "tool_timeout_sec"):
        if key in entry and (isinstance(entry[key], bool) or not isinstance(entry[key], (int, float))):
            raise ConfigError(f"{where}: {key} must be a number of seconds", setting=f"{SERVERS_KEY}.{name}.{key}")
    fields = {k: v for k, v in entry.items() if k != "http_headers"}
    fields["headers"] = entry.get("http_headers", {})
    return _build(name, fields, where, source, origin, fingerprint(entry))


def _build(name: str, fields: dict[str, Any], where: str, source: str, origin: str, digest: str) -> ServerConfig:
    has_command, has_url = bool(fields.get("command")), bool(fields.get("url"))
    if has_command == has_url:
        raise ConfigError(f"{where}: give either command (a stdio server) or url (a streamable HTTP server)",
                          setting=f"{SERVERS_KEY}.{name}")
    transport = "stdio" if has_command else "http"
    try:
        return validate(ServerConfig, {**fields, "name": name, "transport": transport, "source": source,
                                       "origin": origin, "fingerprint": digest}, strict=True, finite=True)
    except Invalid as exc:
        key = ".".join(map(str, exc.loc)) or "(entry)"
        raise ConfigError(f"{where}: {key}: {exc.msg}", setting=f"{SERVERS_KEY}.{name}") from None


def read_project_file(path: Path, env: Mapping[str, str], *, origin: str = "repo") -> tuple[list[ServerConfig], list[str]]:
    """The servers of a `.mcp.json` at `path` ({"mcpServers": {name: {...}}}), and problems
    (the file unreadable, or one server's: bad entry, `type` "sse", an unset `${VAR}`);
    ([], []) when there is no file."""
    if not path.is_file():
        return [], []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return [], [f"{path}: not read ({exc}); fix the JSON or move the file away"]
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return [], [f'{path}: no "mcpServers" object; write {{"mcpServers": {{"NAME": {{"command": ...}}}}}}']
    found, problems = [], []
    for name, entry in servers.items():
        try:
            found.append(_json_server(str(name), entry, path, env, origin))
        except ConfigError as exc:
            problems.append(str(exc))
    return found, problems


def _json_server(name: str, entry: Any, path: Path, env: Mapping[str, str], origin: str) -> ServerConfig:
    where = f"{path}: server {name!r}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be an object with command or url")
    kind = entry.get("type", "stdio" if "command" in entry else "http")
    if kind == "sse":
        raise ConfigError(f'{where}: type "sse" (the old HTTP+SSE transport) is not supported; use a '
                          'streamable HTTP endpoint with type "http"')
    if kind not in ("stdio", "http"):
        raise ConfigError(f'{where}: unknown type {kind!r}; use "stdio" or "http"')
    fields = expand_all({k: v for k, v in entry.items() if k in JSON_KEYS and k != "type"}, env, where=where)
    if kind == "stdio" and "url" in fields or kind == "http" and "command" in fields:
        raise ConfigError(f"{where}: type {kind!r} does not take {'url' if kind == 'stdio' else 'command'}")
    return _build(name, fields, where, str(path), origin, fingerprint(entry))


def merge_servers(groups: Iterable[Iterable[ServerConfig]]) -> tuple[list[ServerConfig], list[str]]:
    """The servers of `groups` (highest precedence first), the first definition of each name
    kept; problems name each later definition left out."""
    kept: dict[str, ServerConfig] = {}
    problems = []
    for group in groups:
        for server in group:
            if server.name in kept:
                problems.append(f"MCP server {server.name!r} of {server.source} is left out: {kept[server.name].source} "
                                "defines it first")
            else:
                kept[server.name] = server
    return list(kept.values()), problems
