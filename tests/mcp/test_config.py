"""Server definitions: Codex's `[mcp_servers.NAME]` keys, Claude Code's `.mcp.json` with `${VAR}` and
`${VAR:-default}`, the errors that say what to fix, precedence, and fingerprints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxagent.config.settings import load_settings
from ctxagent.errors import ConfigError
from ctxagent.mcp.config import merge_servers, parse_server_tables, read_project_file
from ctxagent.mcp.expand import expand


def test_expand_replaces_set_variables_and_uses_defaults_for_unset_or_empty_ones() -> None:
    env = {"HOST": "example.org", "EMPTY": ""}
    assert expand("https://${HOST}/mcp", env, where="w") == "https://example.org/mcp"
    assert expand("${PORT:-8080}/${EMPTY:-x}/${HOST:-no}", env, where="w") == "8080/x/example.org"
    assert expand("${A:-}", env, where="w") == ""
    assert expand("$HOST and ${ not a ref", env, where="w") == "$HOST and ${ not a ref"


def test_expand_names_an_unset_variable_without_default() -> None:
    with pytest.raises(ConfigError, match=r"\$\{TOKEN\} is not set.*export TOKEN"):
        expand("Bearer ${TOKEN}", {}, where=".mcp.json: server 'x'")


def test_codex_tables_give_stdio_and_http_servers_with_defaults_and_filters() -> None:
    table = {"calc": {"command": "calc-server", "args": ["--fast"], "env": {"MODE": "x"}, "enabled_tools": ["add"],
                      "disabled_tools": ["crash"]},
             "docs": {"url": "https://docs.example/mcp", "bearer_token_env_var": "DOCS", "startup_timeout_sec": 3,
                      "tool_timeout_sec": 5.5, "http_headers": {"X-Team": "core"}}}
    calc, docs = parse_server_tables(table, "/u/config.toml")
    assert (calc.transport, calc.target(), calc.env, calc.origin) == ("stdio", "calc-server --fast", {"MODE": "x"}, "user")
    assert (calc.startup_timeout_sec, calc.tool_timeout_sec) == (10.0, 60.0)  # Codex's defaults
    assert calc.offers("add") and not calc.offers("crash") and not calc.offers("echo")
    assert (docs.transport, docs.url, docs.headers, docs.tool_timeout_sec) == ("http", "https://docs.example/mcp",
                                                                              {"X-Team": "core"}, 5.5)
    assert docs.offers("anything")


@pytest.mark.parametrize(("entry", "message"), [
    ({"command": "x", "timeout": 3}, r"unknown key\(s\) 'timeout'; the keys are command, args"),
    ({"command": "x", "url": "http://h/mcp"}, "give either command .* or url"),
    ({}, "give either command"),
    ({"command": "x", "args": "a b"}, r"args: Expected `array`, got `str`"),
    ({"command": "x", "startup_timeout_sec": True}, "startup_timeout_sec must be a number of seconds"),
    ({"command": "x", "tool_timeout_sec": -1}, r"tool_timeout_sec: Expected `float` > 0"),
    ({"command": "x", "env": {"MODE": "x", "PORT": 8080}}, r"env\.PORT: Expected `str`, got `int`"),
])
def test_a_bad_table_is_a_config_error_naming_the_file_server_and_key(entry: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=r"/u/config.toml: \[mcp_servers.bad\].*" + message):
        parse_server_tables({"bad": entry}, "/u/config.toml")


def test_project_file_expands_variables_and_reports_each_bad_server_beside_the_good_ones(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "fs-server", "${ROOT:-/srv}"], "env": {"KEY": "${FS_KEY}"}},
        "web": {"type": "http", "url": "https://${HOST:-api.example}/mcp", "headers": {"X-Key": "${FS_KEY}"}},
        "old": {"type": "sse", "url": "https://old.example/sse"},
        "unset": {"command": "x", "args": ["${MISSING}"]},
    }}), encoding="utf-8")
    servers, problems = read_project_file(path, {"FS_KEY": "k1"})
    fs, web = servers
    assert (fs.args, fs.env, fs.origin) == (["-y", "fs-server", "/srv"], {"KEY": "k1"}, "repo")
    assert (web.transport, web.url, web.headers) == ("http", "https://api.example/mcp", {"X-Key": "k1"})
    assert len(problems) == 2
    assert 'type "sse"' in problems[0] and "streamable HTTP" in problems[0]
    assert "${MISSING} is not set" in problems[1]


def test_a_broken_or_missing_project_file_is_a_problem_not_an_error(tmp_path: Path) -> None:
    assert read_project_file(tmp_path / ".mcp.json", {}) == ([], [])
    (tmp_path / ".mcp.json").write_text("{not json", encoding="utf-8")
    servers, [problem] = read_project_file(tmp_path / ".mcp.json", {})
    assert servers == [] and "fix the JSON" in problem
    (tmp_path / ".mcp.json").write_text('{"servers": {}}', encoding="utf-8")
    assert 'no "mcpServers" object' in read_project_file(tmp_path / ".mcp.json", {})[1][0]


def test_the_first_definition_of_a_name_wins_and_a_changed_one_has_another_fingerprint() -> None:
    [mine] = parse_server_tables({"calc": {"command": "mine"}}, "/u/config.toml")
    [theirs] = parse_server_tables({"calc": {"command": "theirs"}}, "/r/.ctxagent/config.toml", origin="repo")
    [again] = parse_server_tables({"calc": {"command": "mine"}}, "/elsewhere.toml")
    servers, [problem] = merge_servers([[mine], [theirs]])
    assert servers == [mine] and "/r/.ctxagent/config.toml is left out" in problem
    assert mine.fingerprint == again.fingerprint != theirs.fingerprint


def test_settings_read_server_tables_from_the_user_and_the_repository_files(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    (home / ".config" / "ctxagent").mkdir(parents=True)
    (repo / ".ctxagent").mkdir(parents=True)
    (home / ".config" / "ctxagent" / "config.toml").write_text(
        '[mcp]\nallow = ["mcp__calc__add"]\n\n[mcp_servers.calc]\ncommand = "calc"\n', encoding="utf-8")
    (repo / ".ctxagent" / "config.toml").write_text(
        '[mcp]\nallow = ["mcp__*"]\n\n[mcp_servers.repo_tool]\nurl = "http://127.0.0.1:9/mcp"\n', encoding="utf-8")
    with pytest.warns(UserWarning, match=r"mcp.allow \(only your own config may set it\)"):
        settings = load_settings(repo, {}, {"HOME": str(home)}, require_key=False, require_model=False)
    assert [(s.name, s.origin) for s in settings.mcp_servers] == [("calc", "user"), ("repo_tool", "repo")]
    assert settings.mcp.allow == ["mcp__calc__add"]  # a repository cannot allow tools
    (home / ".config" / "ctxagent" / "config.toml").write_text('[mcp_servers.x]\ncmd = "x"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[mcp_servers.x\]: unknown key\(s\) 'cmd'"):
        load_settings(repo, {}, {"HOME": str(home)}, require_key=False, require_model=False)
