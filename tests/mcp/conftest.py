"""Fixtures of the MCP tests: definitions of the real test servers in tests/mcp/servers."""

from __future__ import annotations

import sys
from typing import Iterator

import pytest

from ctxagent.mcp.config import parse_server_tables
from ctxagent.mcp.settings import ServerConfig
from tests.mcp.servers.launch import STDIO_SERVER, http_server

TOKEN = "http-token-31c9"


def stdio_config(name: str = "calc", **keys: object) -> ServerConfig:
    """The SDK stdio test server as a user-config definition, `keys` added to its table."""
    [server] = parse_server_tables({name: {"command": sys.executable, "args": [str(STDIO_SERVER)], **keys}},
                                   "/u/config.toml")
    return server


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real streamable-HTTP test server wanting `Bearer TOKEN`, shared by a module's tests."""
    with http_server(tmp_path_factory.mktemp("mcp-http"), TOKEN) as url:
        yield url
