"""The hooks of a session: where their rules come from, and which a repository may bring.
Order: the user's `[hooks]` in config.toml, the user's `hooks.json` beside it, then the
repository's `[hooks]` and `.ctxagent/hooks.json`, which run only when the repository is trusted
(`trusted_repos` or --trust-repo-config, as its config: docs/hooks.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from ctxagent.agent.session import Session
from ctxagent.config.settings import Settings, repo_config_path, user_config_path
from ctxagent.harness.hooks import HookRule, Hooks, parse_hooks, read_hooks_file
from ctxagent.storage.files import state_dir

HOOKS_FILE = "hooks.json"


def hook_rules(repo: Path, settings: Settings, env: Mapping[str, str] | None = None) -> tuple[list[HookRule], list[str]]:
    """The rules that may run for `repo`, and warnings (a repository's hooks left out because it
    is not trusted). Raises ConfigError for a broken hooks file."""
    rules: list[HookRule] = []
    repo_source = str(repo_config_path(repo))
    user_table = [(src, t) for src, t in settings.hook_tables if src != repo_source]
    repo_table = [(src, t) for src, t in settings.hook_tables if src == repo_source]
    for source, table in user_table:
        rules += parse_hooks(table, source)
    rules += read_hooks_file(user_config_path(env).parent / HOOKS_FILE)
    for source, table in repo_table:  # present only when trusted (config.settings drops them otherwise)
        rules += parse_hooks(table, source)
    warnings = []
    repo_file = state_dir(repo) / HOOKS_FILE
    if repo_file.is_file():
        if settings.repo_trust.trusted:
            rules += read_hooks_file(repo_file)
        else:
            warnings.append(f"hooks in {repo_file} were not run: this repository is not trusted. "
                            f"{settings.repo_trust.how_to_trust}")
    return rules, warnings


def session_hooks(repo: Path, settings: Settings, session: Session,
                  env: Mapping[str, str] | None = None) -> tuple[Hooks, list[str]]:
    """`Hooks` for `session` in `repo` (see `hook_rules`), and the warnings to show."""
    rules, warnings = hook_rules(repo, settings, env)
    return Hooks(rules, repo=repo, session_id=session.id, transcript_path=str(session.path),
                 secrets=session.secrets), warnings

