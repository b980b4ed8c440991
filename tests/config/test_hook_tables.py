"""`[hooks]` in config.toml: the user's file is run, a repository's only when the repository is
trusted (like its other settings that run or allow things), and `.ctxagent/hooks.json` too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxagent.agent.hooks import hook_rules
from ctxagent.config.settings import repo_config_path, user_config_path
from ctxagent.errors import ConfigError
from tests.config.test_trust import env, load, repo, write  # noqa: F401  (fixtures)

HOOK = '[[hooks.PreToolUse]]\nmatcher = "apply_patch"\nhooks = [{type = "command", command = "exit 2"}]\n'


def test_the_users_hooks_table_is_kept(repo: Path, env: dict) -> None:
    write(user_config_path(env), HOOK)
    settings, warned = load(repo, env)
    [(source, table)] = settings.hook_tables
    assert source == str(user_config_path(env)) and table["PreToolUse"][0]["matcher"] == "apply_patch"
    assert not warned
    [rule] = hook_rules(repo, settings, env)[0]
    assert (rule.event, rule.command) == ("PreToolUse", "exit 2")


def test_an_untrusted_repositorys_hooks_are_ignored_and_said(repo: Path, env: dict) -> None:
    write(repo_config_path(repo), HOOK)
    settings, warned = load(repo, env)
    assert settings.hook_tables == []
    assert len(warned) == 1 and "hooks (runs commands)" in warned[0] and "trusted_repos" in warned[0]


def test_a_trusted_repositorys_hooks_run_after_the_users(repo: Path, env: dict) -> None:
    write(user_config_path(env), HOOK.replace("exit 2", "echo user"))
    write(repo_config_path(repo), HOOK.replace("exit 2", "echo repo"))
    settings, _ = load(repo, env, trust_repo=True)
    assert [r.command for r in hook_rules(repo, settings, env)[0]] == ["echo user", "echo repo"]


def test_a_repository_hooks_json_needs_trust(repo: Path, env: dict) -> None:
    write(repo / ".ctxagent" / "hooks.json", json.dumps({"Stop": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}))
    settings, _ = load(repo, env)
    rules, warnings = hook_rules(repo, settings, env)
    assert rules == [] and "were not run: this repository is not trusted" in warnings[0]
    settings, _ = load(repo, env, trust_repo=True)
    rules, warnings = hook_rules(repo, settings, env)
    assert [r.command for r in rules] == ["echo hi"] and warnings == []


def test_the_users_hooks_json_beside_config_toml_is_read(repo: Path, env: dict) -> None:
    write(user_config_path(env).parent / "hooks.json",
          json.dumps({"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "echo bye"}]}]}}))
    settings, _ = load(repo, env)
    assert [(r.event, r.command) for r in hook_rules(repo, settings, env)[0]] == [("SessionEnd", "echo bye")]


def test_a_broken_hooks_table_names_the_file(repo: Path, env: dict) -> None:
    write(user_config_path(env), '[[hooks.PreToolUse]]\nhooks = [{type = "command", command = "x", timeout = -1}]\n')
    with pytest.raises(ConfigError, match="timeout must be a number") as err:
        load(repo, env)
    assert str(user_config_path(env)) in str(err.value)
