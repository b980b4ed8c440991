"""What a server process or connection is given: the environment of a stdio server (a
minimal safe base plus its configured `env`) and the headers of an HTTP one; never the
model's API key (a definition that would pass it is refused)."""

from __future__ import annotations

import os
from typing import Iterable, Mapping

from ctxagent.errors import ConfigError
from ctxagent.mcp.settings import ServerConfig

#: Variables a server inherits from ctxagent's environment (what a program needs to run).
SAFE_BASE = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "TMPDIR",
             "SYSTEMROOT")


def server_env(server: ServerConfig, secrets: Iterable[str], env: Mapping[str, str] | None = None) -> dict[str, str]:
    """SAFE_BASE from `env` (default os.environ) plus `server.env`. Raises ConfigError when a
    configured value holds one of `secrets` (the model's API key)."""
    env = os.environ if env is None else env
    base = {name: env[name] for name in SAFE_BASE if name in env and not env[name].startswith("()")}
    _refuse_secrets(server, server.env, secrets, "env")
    return {**base, **server.env}


def server_headers(server: ServerConfig, secrets: Iterable[str], env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`server.headers`, plus `Authorization: Bearer $<bearer_token_env_var>`. Raises ConfigError
    when that variable is not set, or a header holds one of `secrets`."""
    env = os.environ if env is None else env
    headers = dict(server.headers)
    if server.bearer_token_env_var:
        token = env.get(server.bearer_token_env_var, "")
        if not token:
            raise ConfigError(f"MCP server {server.name!r} ({server.source}): bearer_token_env_var names "
                              f"{server.bearer_token_env_var}, which is not set; export it or remove the key")
        headers["Authorization"] = f"Bearer {token}"
    _refuse_secrets(server, headers, secrets, "headers")
    return headers


def _refuse_secrets(server: ServerConfig, values: Mapping[str, str], secrets: Iterable[str], what: str) -> None:
    for key, value in values.items():
        if any(secret and secret in value for secret in secrets):
            raise ConfigError(f"MCP server {server.name!r} ({server.source}) was not started: its {what} entry "
                              f"{key!r} holds the model's API key, which is never given to a server")
