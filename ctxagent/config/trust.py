"""Which settings a repository's own `.ctxagent/config.toml` may set (breaker report F0).

An allow-list: FREE, AT_MOST / AT_LEAST, ONLY and UNION keys; anything else is ignored
with one `UntrustedConfigWarning`. Trusted repositories (`trusted_repos`,
`--trust-repo-config`) are read whole. Reference: docs/configuration.md
("Repository config files are not trusted", "Module notes").
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any, Mapping

import msgspec

from ctxagent.errors import ConfigError
from ctxagent.validation import Record, field_default

FREE = frozenset({
    "model.model", "model.context_window", "model.max_output_tokens", "model.max_tokens_field",
    "model.temperature", "model.send_reasoning_content", "model.empty_content", "agent.episodic_memory",
    "model.protocol", "model.cache_control",
})
"""Keys a repository may set to any valid value."""
FREE_SECTIONS = frozenset({"context"})
"""Tables whose every key a repository may set (budget shares, weights, compaction ratios)."""
AT_MOST = frozenset({
    "model.timeout_s", "model.max_retries", "agent.max_steps", "agent.max_task_tokens", "agent.max_cost_usd",
    "agent.wall_time_s", "agent.max_concurrent_subagents", "agent.subagent_max_steps",
    "agent.subagent_max_task_tokens", "tools.terminal_timeout_s", "tools.terminal_max_output_bytes", "tools.patch_max_files",
    "tools.patch_max_changed_lines", "tools.max_result_chars", "exec.timeout_s", "exec.max_output_bytes",
})
"""Limits a repository may only lower."""
AT_LEAST = frozenset({"model.price_prompt_per_mtok", "model.price_cached_prompt_per_mtok",
                      "model.price_completion_per_mtok"})
"""Prices a repository may only raise (None, "not counted", is the loosest)."""
ONLY = {"agent.auto_approve": False, "exec.network": False}
"""Keys a repository may set to this one value only (a singleton, compared with `is`: "false" is not False)."""
UNION = frozenset({"exec.deny"})
"""List keys whose repository value is added to the lower levels' list (deny rules)."""
TRUSTED_REPOS_KEY = "trusted_repos"
"""Top-level key of the user file listing trusted repositories (read here, skipped by the loader)."""
TRUST_FLAG = "--trust-repo-config"

_WHY = {"model.provider": "picks the provider and its key", "model.base_url": "decides where requests go",
        "model.api_key": "sets the key", "model.api_key_env": "picks which secret is sent",
        "model.extra_body": "adds request fields", "agent.auto_approve": "switches off approval",
        "agent.approval": "switches off approval of commands", "agent.mode": "switches the permission mode",
        "exec.allow": "lets commands run without asking", "exec.python": "picks the program that runs code",
        "exec.env_passthrough": "passes environment variables to commands", "exec.sandbox": "changes the sandbox",
        TRUSTED_REPOS_KEY: "a repository cannot trust itself"}


class UntrustedConfigWarning(UserWarning):
    """Settings of an untrusted repository config file were ignored (message: which, and how to trust)."""


class IgnoredSetting(Record):
    """One repository setting that was not applied."""

    key: str
    """Dotted key, e.g. "model.base_url" (or "trusted_repos")."""
    reason: str
    """Why, in a few words: "decides where requests go", "may only lower 40"."""


class RepoConfigTrust(Record):
    """What the trust rule did with `<repo>/.ctxagent/config.toml` (shown by `ctxagent doctor`)."""

    path: str | None = None
    """The repository config file, or None when the repository has none."""
    trusted: bool = False
    """True when the file was read whole."""
    trusted_by: str | None = None
    """"flag --trust-repo-config" or "trusted_repos in <user file>"; None when not trusted."""
    ignored: list[IgnoredSetting] = msgspec.field(default_factory=list)
    """Settings of the file that were not applied, in file order."""
    how_to_trust: str = ""
    """The advice given with the warning."""

    def warning(self) -> str | None:
        """The one-line warning for the ignored settings, or None when nothing was ignored."""
        if not self.ignored:
            return None
        keys = ", ".join(f"{i.key} ({i.reason})" for i in self.ignored)
        return f"ignored from the untrusted repository config {self.path}: {keys}. {self.how_to_trust}"


class RepoTrust:
    """Applies the trust rule to one repository's config layer; `report` says what it did. `repo`,
    `user_file` (may not exist), `flag` (--trust-repo-config), `sections` (table -> settings
    record, for the limits' defaults). Raises ConfigError when `trusted_repos` is not a list of
    absolute paths."""

    def __init__(self, repo: Path, user_file: Path, *, flag: bool, sections: Mapping[str, type]) -> None:
        self.sections = sections
        self.report = RepoConfigTrust()
        self.report.how_to_trust = (f"To trust this repository, add {TRUSTED_REPOS_KEY} = "
                                    f"[{_toml_str(str(Path(repo).resolve()))}] to {user_file}, or pass {TRUST_FLAG}.")
        listed = Path(repo).resolve() in trusted_repos(user_file)
        if flag:
            self.report.trusted, self.report.trusted_by = True, f"flag {TRUST_FLAG}"
        elif listed:
            self.report.trusted, self.report.trusted_by = True, f"{TRUSTED_REPOS_KEY} in {user_file}"

    def filter(self, layer: dict[str, tuple[Any, str]], lower: Mapping[str, tuple[Any, ...]],
               path: Path) -> dict[str, tuple[Any, str]]:
        """The part of the repository `layer` (dotted key -> (value, source)) that may apply.

        lower: values already set by lower levels (dotted key -> (value, ...)), which a
        tighten-only limit is compared with. What it ignored is in `report`; `warn` says it.
        """
        self.report.path = str(path)
        if self.report.trusted:
            return layer
        if TRUSTED_REPOS_KEY in _read(path):
            self.report.ignored.append(IgnoredSetting(key=TRUSTED_REPOS_KEY, reason=_WHY[TRUSTED_REPOS_KEY]))
        kept = {}
        for key, (value, source) in layer.items():
            reason = self._refusal(key, value, lower)
            if reason is None and key in UNION and isinstance(value, list):
                below = lower[key][0] if key in lower and isinstance(lower[key][0], list) else []
                kept[key] = ([*below, *(v for v in value if v not in below)], source)
            elif reason is None:
                kept[key] = (value, source)
            else:
                self.report.ignored.append(IgnoredSetting(key=key, reason=reason))
        return kept

    def warn(self) -> None:
        """One UntrustedConfigWarning listing every ignored setting (none when nothing was)."""
        message = self.report.warning()
        if message:
            warnings.warn(message, UntrustedConfigWarning, stacklevel=3)

    def _refusal(self, key: str, value: Any, lower: Mapping[str, tuple[Any, ...]]) -> str | None:
        """None when an untrusted file may set `key` to `value`, else why not."""
        if key in FREE or key in UNION or key.split(".", 1)[0] in FREE_SECTIONS:
            return None
        if key in ONLY:
            return None if value is ONLY[key] else _WHY.get(key, "only this value: " + repr(ONLY[key]))
        if key not in AT_MOST and key not in AT_LEAST:
            return _WHY.get(key, "only your own config may set it")
        new = _number(value)
        if new is None:
            return None  # not a number: validation names the file and the key
        old = lower[key][0] if key in lower else self._default(key)
        return _limit_refusal(new, old, at_most=key in AT_MOST)

    def _default(self, key: str) -> Any:
        section, name = key.split(".", 1)
        model = self.sections[section]
        return field_default(model, name) if isinstance(model, type) and issubclass(model, Record) else None


def _limit_refusal(new: float, old: Any, *, at_most: bool) -> str | None:
    """None when `new` is at most (`at_most`) or at least `old`; None as `old` means no limit."""
    if math.isnan(new):
        return "not a number"
    if old is None:
        return None
    old_number = _number(old)
    if old_number is None:
        return "the value it would replace is not a number"
    if at_most:
        return None if new <= old_number else f"may only lower {old!r}"
    return None if new >= old_number else f"may only raise {old!r}"


def trusted_repos(user_file: Path) -> set[Path]:
    """The resolved paths in `trusted_repos` of the user config file (empty when absent).

    Raises ConfigError naming the file when the value is not a list of absolute paths
    (`~` is expanded). The TOML itself was already checked by the settings loader.
    """
    entries = _read(user_file).get(TRUSTED_REPOS_KEY, [])
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise ConfigError(f"{user_file}: {TRUSTED_REPOS_KEY} must be a list of paths, e.g. "
                          f'{TRUSTED_REPOS_KEY} = ["/home/me/src/project"]', setting=TRUSTED_REPOS_KEY)
    paths = set()
    for entry in entries:
        path = Path(entry).expanduser()
        if not path.is_absolute():
            raise ConfigError(f"{user_file}: {TRUSTED_REPOS_KEY} entry {entry!r} is not an absolute path; "
                              "write the repository's full path", setting=TRUSTED_REPOS_KEY)
        paths.add(path.resolve())
    return paths


def _read(path: Path) -> dict[str, Any]:
    """The TOML file at `path` as a dict; {} when it is missing or unreadable (the loader reports those)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    from ctxagent.config import toml as tomllib  # the TOML parser only when a file exists (start-up, issue 16)

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _number(value: Any) -> float | None:
    """`value` as a number if the settings accept it as one (an int or a float: they are
    strict, so `true` and "100" are not numbers), else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _toml_str(text: str) -> str:
    """`text` as a TOML basic string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
