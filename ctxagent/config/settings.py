"""Settings from flags, environment and config files, in that precedence.

flags > environment > `<repo>/.ctxagent/config.toml` > user config > provider preset >
defaults; `Settings.sources` says where each value came from. Provider choice and the
fallback to a local model: docs/configuration.md (reference, "Module notes").
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Callable, Iterator, Literal, Mapping

import msgspec
from msgspec import Meta

from ctxagent.config.check import allowed_range, check_context, context_keys, problem_text, shown_value, unknown_key_message
from ctxagent.config.exec_settings import ExecSettings
from ctxagent.config.state_settings import StateSettings
from ctxagent.config.trust import TRUSTED_REPOS_KEY, IgnoredSetting, RepoConfigTrust, RepoTrust
from ctxagent.errors import ConfigError, StorageError
from ctxagent.llm.presets import PRESETS
from ctxagent.llm.settings import ModelSettings
from ctxagent.mcp.settings import SERVERS_KEY, McpSettings, ServerConfig
from ctxagent.storage.files import state_dir
from ctxagent.validation import Invalid, Record, field_names, validate

if TYPE_CHECKING:
    from ctxagent.exec.gate import ExecPolicy

#: The tools the bundled offline model gets when `[agent] tools` is not set: SmolLM2-135M,
#: offered all 8 (about 3,750-5,000 prompt tokens of schemas), mostly calls `todo` for any
#: task (breaker F15); with these two it looks around with `terminal`.
LOCAL_TOOLS = ("terminal", "apply_patch")


class AgentSettings(Record):
    """Limits and behaviour of the agent loop; each limit ends a turn with its own TurnEnd reason.

    Every number must be finite and within the range given in its description (a value
    outside it is a ConfigError naming the key and the range).
    """

    max_steps: Annotated[int, Meta(gt=0, le=10_000)] = 40
    """Model calls per turn before it stops (TurnEnd reason max_steps); 1 to 10000."""
    max_task_tokens: Annotated[int, Meta(gt=0, le=1_000_000_000)] = 2_000_000
    """Prompt + completion tokens per turn (the plan tool's and compaction summaries' model calls included) before it stops (reason max_tokens); 1 to 10^9."""
    max_cost_usd: Annotated[float, Meta(gt=0, le=10_000)] = 2.0
    """USD per turn (side calls included, as for max_task_tokens) before it stops (reason max_cost); counted only when the model's prices are known (model.price_*, else ctxagent/llm/prices.json; `ctxagent doctor` says which); (0, 10000]."""
    wall_time_s: Annotated[float, Meta(gt=0, le=86_400)] = 1800.0
    """Seconds per turn before it stops (reason wall_time); checked before each model call; (0, 86400]."""
    auto_approve: bool = False
    """Approve every patch without asking (same as --yes); never commands or code (see `approval`)."""
    mode: Literal["read-only", "workspace-write"] = "read-only"
    """Permission mode (--mode): "read-only" (read-only terminal, patches) or "workspace-write" (also approved commands and python_exec)."""
    approval: Literal["ask", "never"] = "ask"
    """"never": run commands and python_exec without asking, for headless runs (same as --allow-exec; trusted config only)."""
    episodic_memory: bool = True
    """Write a short episodic memory (task, outcome, files changed, tokens) to memory.db when a turn that changed files or found something ends."""
    max_concurrent_subagents: Annotated[int, Meta(gt=0, le=16)] = 3
    """Sub-agents (`delegate` calls of one reply) run at the same time; 1 to 16."""
    subagent_max_steps: Annotated[int, Meta(gt=0, le=1_000)] = 20
    """Model calls of one sub-agent unless its definition sets `max_steps`; 1 to 1000."""
    subagent_max_task_tokens: Annotated[int, Meta(gt=0, le=1_000_000_000)] = 300_000
    """Prompt + completion tokens of one sub-agent (at most the parent's max_task_tokens); they count in the parent's too."""
    tools: list[str] | Literal["all"] | None = None
    """Tools offered to the model, by name (e.g. ["terminal", "apply_patch"]), or "all"; unset: all of them, except for provider local (the bundled offline model), which gets only terminal and apply_patch."""

    def __post_init__(self) -> None:
        """A `tools` list names at least one tool (else ValueError "tools: ..."); duplicates are
        dropped. The names are checked against `ctxagent.tools.TOOLS` when the tools are opened
        (`ctxagent.agent.toolset.check_tool_names`)."""
        if isinstance(self.tools, list):
            if not self.tools:
                raise ValueError('tools: name at least one tool, or use "all"')
            self.tools = list(dict.fromkeys(self.tools))

    def tool_names(self, provider: str) -> list[str] | None:
        """The tools the agent offers with model `provider`: `tools` when set ("all": None,
        every one), else LOCAL_TOOLS for provider "local", else None (every one)."""
        if self.tools is None:
            return list(LOCAL_TOOLS) if provider == LOCAL_PROVIDER else None
        return None if self.tools == "all" else list(self.tools)


class ToolSettings(Record):
    """Limits passed to the tools (finite, within the range given in each description)."""

    terminal_timeout_s: Annotated[float, Meta(gt=0, le=3600)] = 30.0
    """Seconds a terminal command may run before its process group is killed; (0, 3600]."""
    terminal_max_output_bytes: Annotated[int, Meta(gt=0, le=10_000_000)] = 64_000
    """Bytes of terminal output kept (head and tail) before it is cut; 1 to 10^7."""
    patch_max_files: Annotated[int, Meta(gt=0, le=10_000)] = 50
    """Files one patch may touch; 1 to 10000."""
    patch_max_changed_lines: Annotated[int, Meta(gt=0, le=1_000_000)] = 5_000
    """Added + removed lines one patch may contain; 1 to 10^6."""
    max_result_chars: Annotated[int, Meta(gt=0, le=10_000_000)] = 40_000
    """Characters of one tool result kept in the history (head and tail, marked; case C05); 1 to 10^7."""


class HarnessSettings(Record):
    """The harness's files (`[harness]`, docs/harness.md): AGENTS.md fallback names and byte caps."""

    fallback_names: Annotated[list[str], Meta(max_length=20)] = msgspec.field(
        default_factory=lambda: ["CLAUDE.md", "GEMINI.md"])
    """Names tried in each folder after AGENTS.override.md and AGENTS.md (Codex's project_doc_fallback_filenames)."""
    agents_max_bytes: Annotated[int, Meta(ge=0, le=1_048_576)] = 32 * 1024
    """Bytes of the whole AGENTS.md chain sent to the model (0 turns it off); at most 1 MiB."""
    profile_max_bytes: Annotated[int, Meta(gt=0, le=1_048_576)] = 16 * 1024
    """Bytes of one profile file (Agent.md, Memory.md...) sent to the model; at most 1 MiB."""


class ContextSettings:
    """The `[context]` table, read as attributes (`context.max_tokens`; AttributeError for a key
    not set) and listed by `items()`. Its keys are defined and checked by the context engine
    (`ctxagent.context.packet.ContextConfig` fields and `compaction_<CompactionConfig field>`):
    `load_settings` refuses unknown keys and out-of-range values (`ctxagent.config.check`)."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, Any] | None = None, /, **more: Any) -> None:
        object.__setattr__(self, "_values", {**(values or {}), **more})

    def __getattr__(self, key: str) -> Any:
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(f"[context] has no {key!r} set") from None

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("the [context] settings are read-only")

    def items(self) -> Iterator[tuple[str, Any]]:
        """(key, value) of each key set, in the order the layers set them."""
        return iter(list(self._values.items()))

    def to_dict(self) -> dict[str, Any]:
        """The keys set, as a new dict."""
        return dict(self._values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ContextSettings) and other._values == self._values

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ContextSettings({self._values!r})"


class Settings(Record, kw_only=True):
    """Everything ctxagent reads from configuration. `sources`: dotted key -> where its value came from.
    Built by `load_settings` from sections it checked; the constructor validates nothing."""

    model: ModelSettings
    """The model endpoint."""
    agent: AgentSettings = msgspec.field(default_factory=AgentSettings)
    """Loop limits and approval."""
    tools: ToolSettings = msgspec.field(default_factory=ToolSettings)
    """Tool limits."""
    context: ContextSettings = msgspec.field(default_factory=ContextSettings)
    """Context engine settings."""
    exec: ExecSettings = msgspec.field(default_factory=ExecSettings)
    """Approved commands and python_exec: rules, sandbox, limits."""
    harness: HarnessSettings = msgspec.field(default_factory=HarnessSettings)
    """Profile files, the AGENTS.md chain, skills."""
    state: StateSettings = msgspec.field(default_factory=StateSettings)
    """Session retention and what a new session carries over (`[state]`)."""
    sources: dict[str, str] = msgspec.field(default_factory=dict)
    """Where each non-default value came from: "flag --model", "env CTXAGENT_MODEL", a file path, "preset deepseek"."""
    files: list[str] = msgspec.field(default_factory=list)
    """Config files that were read, lowest precedence first."""
    repo_trust: RepoConfigTrust = msgspec.field(default_factory=RepoConfigTrust)
    """Whether `<repo>/.ctxagent/config.toml` was trusted and which of its settings were ignored (F0)."""
    hook_tables: list[tuple[str, dict[str, Any]]] = msgspec.field(default_factory=list)
    """`[hooks]` tables that may run, (file, table), user file first; checked (docs/hooks.md)."""
    mcp: McpSettings = msgspec.field(default_factory=McpSettings)
    """`[mcp]`: whether MCP servers start, which of their tools run without asking (docs/mcp.md)."""
    mcp_servers: list[ServerConfig] = msgspec.field(default_factory=list)
    """`[mcp_servers.NAME]` definitions, user file first; a repository's have origin "repo" (docs/mcp.md)."""

    def exec_policy(self) -> ExecPolicy:
        """The `ExecPolicy` of `[exec]` under `[agent] mode`."""
        return self.exec.policy(self.agent.mode)

    def secrets(self) -> list[str]:
        """Secret strings to redact from anything written (the API key)."""
        key = self.model.api_key
        return [key.get_secret_value()] if key is not None and key.get_secret_value() else []

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready nested dict of the settings (the API key masked; `context`: its table)."""
        out = Record.to_dict(self.replace(context=None))  # type: ignore[arg-type]  # not a Record
        out["context"] = self.context.to_dict()
        return out


_SECTIONS = {"model": ModelSettings, "agent": AgentSettings, "tools": ToolSettings, "context": ContextSettings,
             "exec": ExecSettings, "harness": HarnessSettings, "state": StateSettings, "mcp": McpSettings}
_LOADER_KEYS = {"model.api_key_env"}
HOOKS_KEY = "hooks"
"""The top-level table of hook rules (Claude Code's events table), kept whole in `Settings.hook_tables`."""
_ENV = {"CTXAGENT_PROVIDER": "model.provider", "CTXAGENT_MODEL": "model.model",
        "CTXAGENT_BASE_URL": "model.base_url", "CTXAGENT_API_KEY": "model.api_key"}
#: Flag names (as the CLI passes them) -> dotted settings; dotted keys are accepted too.
FLAGS = {"provider": "model.provider", "model": "model.model", "base_url": "model.base_url",
         "max_steps": "agent.max_steps", "max_task_tokens": "agent.max_task_tokens",
         "max_cost_usd": "agent.max_cost_usd", "wall_time_s": "agent.wall_time_s",
         "auto_approve": "agent.auto_approve", "yes": "agent.auto_approve", "mode": "agent.mode",
         "allow_exec": "agent.approval", "protocol": "model.protocol"}
_IDENTITY = ("model.model", "model.base_url", "model.api_key")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: The settings that choose the provider: a problem with one is "no usable model" for commands that need none.
_PROVIDER_KEYS = ("model.provider", "model.base_url", "model.api_key", "model.api_key_env")
_AUTO_ORDER = ("openai", "deepseek", "qwen")
LOCAL_PROVIDER = "local"
#: The reason given for the offline model with `load_settings(offline_model=False)`.
NOT_LOOKED_FOR = "not looked for (this command calls no model)"
CUSTOM_PROVIDER = "custom"

# Precedence ranks (higher wins).
_DEFAULT, _PRESET, _USER, _REPO, _ENVRANK, _FLAG = range(6)
Value = tuple[Any, str, int]  # value, source label, rank
#: Why the offline model cannot run (None: it can); asked at most once per `load_settings` call.
LocalCheck = Callable[[], str | None]


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/ctxagent/config.toml`, else `$HOME/.config/ctxagent/config.toml`."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "ctxagent" / "config.toml"


def repo_config_path(repo: Path) -> Path:
    """`<repo>/.ctxagent/config.toml`. Raises ConfigError when `<repo>/.ctxagent` is refused
    (a symbolic link, or holding one: `ctxagent.storage.files.state_dir`)."""
    try:
        return state_dir(repo) / "config.toml"
    except StorageError as exc:
        raise ConfigError(str(exc), setting="state folder") from None


def load_settings(repo: Path, flags: dict[str, Any] | None = None, env: Mapping[str, str] | None = None,
                  *, require_key: bool = True, require_model: bool = True, trust_repo: bool = False,
                  offline_model: bool = True) -> Settings:
    """Resolve the settings for `repo`; `flags`: CLI values (None = not given), `env`: default os.environ;
    the repository's file untrusted unless `trust_repo`/`trusted_repos`. Raises ConfigError naming the file
    or variable and the fix (bad TOML, unknown key, invalid value, no usable provider, no key with
    `require_key`); without `require_model` an unusable provider is the model "(none)", its source saying
    why; `offline_model=False`: the bundled model is not looked for (docs/configuration.md, "Module notes")."""
    env = os.environ if env is None else env
    if offline_model:
        local: LocalCheck = cache(lambda: _local_unavailable_reason(env))  # a package search: once per call
    else:  # a command that calls no model (`ctxagent tool`) skips the search (start-up, issue 16)
        local = lambda: NOT_LOOKED_FOR
    values: dict[str, Value] = {}
    before_repo: dict[str, Value] = {}
    files = []
    trust = RepoTrust(repo, user_config_path(env), flag=trust_repo, sections=_SECTIONS)
    hooks: list[tuple[str, dict[str, Any]]] = []
    servers: list[ServerConfig] = []
    for path, rank in ((user_config_path(env), _USER), (repo_config_path(repo), _REPO)):
        if os.path.lexists(path):  # a folder or unreadable file in its place is an error, not "no file"
            layer = _file_layer(path, hooks, servers, "repo" if rank == _REPO else "user")
            if rank == _REPO and hooks and hooks[-1][0] == str(path) and not trust.report.trusted:
                hooks.pop()
                trust.report.ignored.append(IgnoredSetting(key=HOOKS_KEY, reason="runs commands"))
            if rank == _REPO:
                before_repo = dict(values)
            _merge(values, trust.filter(layer, values, path) if rank == _REPO else layer, rank)
            files.append(str(path))
    _merge(values, {k: (env[name], f"env {name}") for name, k in _ENV.items() if env.get(name)}, _ENVRANK)
    _merge(values, _flag_layer(flags or {}), _FLAG)
    if not require_model:  # a command that needs no model never fails (or warns) for the model's settings
        settings = _without_model(values, env, local, files, trust.report, hooks, servers)
        trust.warn()
        return settings
    unapplied = dict(values)
    _resolve_key_env(values, env)
    provider = _apply_provider(values, env, local)
    settings = _build(values, files, trust.report, hooks, servers)
    if not trust.report.trusted and any(k in unapplied and unapplied[k][2] == _REPO
                                        for k in ("model.model", *_PRICE_KEYS)):
        settings = _keep_price_floor(settings, unapplied, before_repo, env, local, files, trust.report, hooks,
                                     servers)
    trust.warn()
    if require_key and provider in PRESETS:
        from ctxagent.llm.presets import resolve_api_key
        resolve_api_key(settings.model)
    return settings


_PRICE_KEYS = ("model.price_prompt_per_mtok", "model.price_cached_prompt_per_mtok", "model.price_completion_per_mtok")


def _keep_price_floor(settings: Settings, values: dict[str, Value], before_repo: dict[str, Value],
                      env: Mapping[str, str], local: LocalCheck, files: list[str], trust: RepoConfigTrust,
                      hooks: list[tuple[str, dict[str, Any]]], servers: list[ServerConfig]) -> Settings:
    """`settings`, kept from counting less than the bill: an untrusted repository's prices below
    the true ones (the user's, else the table's for its model) are dropped, and so is a model of
    its with no known price when the user's has one (added to `trust.ignored`). `values`: before
    the provider was applied."""
    from ctxagent.llm.prices import prices_for

    def build(layer: dict[str, Value]) -> Settings:
        layer = dict(layer)
        _resolve_key_env(layer, env)
        _apply_provider(layer, env, local)
        return _build(layer, files, trust, hooks, servers)

    def back(keys: tuple[str, ...]) -> dict[str, Value]:
        layer = {k: v for k, v in values.items() if not (k in keys and v[2] == _REPO)}
        return {**layer, **{k: before_repo[k] for k in keys if k in before_repo and k not in layer}}

    keys = _PRICE_KEYS
    kept = build(back(keys))  # the repository's model at the true prices
    true_prices, got = prices_for(kept.model), prices_for(settings.model)
    if true_prices is None:  # the repository's model has no known price: only fine if the user's has none
        keys = ("model.model", *_PRICE_KEYS)
        kept = build(back(keys))
        true_prices = prices_for(kept.model)
        if true_prices is None:
            return settings
        reason = f"{settings.model.model!r} has no known price, so max_cost_usd could not count it"
    elif got is not None and all(getattr(got, f) >= getattr(true_prices, f) for f in ("input", "cached_input", "output")):
        return settings
    else:
        reason = f"would count less than {true_prices.describe()}, so max_cost_usd would not hold"
    trust.ignored.extend(IgnoredSetting(key=k, reason=reason) for k in keys if k in values and values[k][2] == _REPO)
    return kept


def _without_model(values: dict[str, Value], env: Mapping[str, str], local: LocalCheck, files: list[str],
                   trust: RepoConfigTrust, hooks: list[tuple[str, dict[str, Any]]],
                   servers: list[ServerConfig]) -> Settings:
    """The settings of `load_settings(require_model=False)`: the provider's when it resolves,
    else the model "(none)" with the reason as its source (a problem with another setting
    still raises); the other sections as configured."""
    reason = "no provider configured"
    if _provider_hint(values, env, local):
        chosen = dict(values)
        try:
            _resolve_key_env(chosen, env)
            _apply_provider(chosen, env, local)
            return _build(chosen, files, trust, hooks, servers)
        except ConfigError as exc:
            if exc.setting not in _PROVIDER_KEYS:
                raise
            reason = f"not usable: {str(exc).splitlines()[0]}"
    values = {k: v for k, v in values.items() if k not in (*_PROVIDER_KEYS, "model.model")}
    values["model.model"] = ("(none)", reason, _DEFAULT)
    values["model.provider"] = (CUSTOM_PROVIDER, reason, _DEFAULT)
    return _build(values, files, trust, hooks, servers)


def _merge(values: dict[str, Value], layer: dict[str, tuple[Any, str]], rank: int) -> None:
    for key, (value, source) in layer.items():
        if value is not None:
            values[key] = (value, source, rank)


def _file_layer(path: Path, hooks: list[tuple[str, dict[str, Any]]], servers: list[ServerConfig],
                origin: str) -> dict[str, tuple[Any, str]]:
    """The settings of one file as dotted key -> (value, source); its `[hooks]` table, checked,
    is appended to `hooks`, its `[mcp_servers]` (of `origin`) to `servers`. Raises ConfigError
    naming the file."""
    from ctxagent.config import toml as tomllib  # the TOML parser only when a file exists (start-up, issue 16)

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"cannot parse {path}: {exc}. Fix the TOML syntax (https://toml.io) or move the file away.") from None
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"cannot read the config file {path}: {why}. It must be a readable UTF-8 TOML "
                          "file; fix or remove it.", setting=str(path)) from None
    layer: dict[str, tuple[Any, str]] = {}
    for section, table in data.items():
        if section == TRUSTED_REPOS_KEY:  # read by ctxagent.config.trust
            continue
        if section == HOOKS_KEY:  # Claude Code's events table, read by ctxagent.harness.hooks
            from ctxagent.harness.hooks.config import parse_hooks

            parse_hooks(table, str(path))
            hooks.append((str(path), table))
            continue
        if section == SERVERS_KEY:  # Codex's server tables, read by ctxagent.mcp.config
            from ctxagent.mcp.config import parse_server_tables

            servers += parse_server_tables(table, str(path), origin=origin)
            continue
        if section not in _SECTIONS or not isinstance(table, dict):
            raise ConfigError(f"{path}: unknown top-level entry {section!r}; use the tables "
                              + ", ".join(f"[{s}]" for s in (*_SECTIONS, HOOKS_KEY, SERVERS_KEY)), setting=section)
        for key, value in table.items():
            dotted = f"{section}.{key}"
            _check_known(dotted, path)
            layer[dotted] = (value, str(path))
    return layer


def _check_known(dotted: str, path: Path | str) -> None:
    section, key = dotted.split(".", 1)
    model = _SECTIONS[section]
    if model is not ContextSettings and key in field_names(model) or dotted in _LOADER_KEYS:  # type: ignore[arg-type]
        return
    valid = set(context_keys()) if model is ContextSettings else set(field_names(model))  # type: ignore[arg-type]
    if key in valid:
        return
    valid |= {k.split(".")[1] for k in _LOADER_KEYS if k.startswith(section + ".")}
    raise ConfigError(unknown_key_message(dotted, valid, path), setting=dotted)


def _flag_layer(flags: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    layer = {}
    for name, value in flags.items():
        dotted = FLAGS.get(name, name)
        if "." not in dotted or dotted.split(".")[0] not in _SECTIONS:
            raise ConfigError(f"unknown setting {name!r} passed as a flag", setting=name)
        _check_known(dotted, f"flag --{name.replace('_', '-')}")
        if dotted == "agent.approval" and isinstance(value, bool):  # --allow-exec
            value = "never" if value else None
        if value is not None and not (dotted == "agent.auto_approve" and value is False):
            layer[dotted] = (value, f"flag --{name.replace('_', '-')}")
    return layer


def _resolve_key_env(values: dict[str, Value], env: Mapping[str, str]) -> None:
    entry = values.pop("model.api_key_env", None)
    if entry is None:
        return
    name, source, rank = entry
    if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):  # not shown: it may be the key itself
        raise ConfigError(f"{source}: model.api_key_env must be the name of an environment variable that holds "
                          "the key (letters, digits and _, e.g. DEEPSEEK_API_KEY), not the key itself; to give "
                          "the key, export it and name that variable, or set api_key", setting="model.api_key_env")
    key = env.get(name, "")
    if not key:
        raise ConfigError(f"{source}: model.api_key_env names {name!r}, which is not set in the environment; "
                          f"export {name}=... or remove api_key_env", setting="model.api_key_env")
    if values.get("model.api_key", (None, "", -1))[2] <= rank:
        values["model.api_key"] = (key, f"env {name} (via api_key_env in {source})", rank)


def _apply_provider(values: dict[str, Value], env: Mapping[str, str], local: LocalCheck) -> str:
    """Pick the provider, fill its preset below the level that chose it; return its name."""
    name, source, rank = _choose_provider(values, env, local)
    values["model.provider"] = (name, source, rank)
    if name not in PRESETS:
        if name == CUSTOM_PROVIDER and "model.base_url" not in values:
            raise ConfigError("provider 'custom' needs a base_url: set CTXAGENT_BASE_URL or --base-url "
                              "(an OpenAI-compatible root such as http://127.0.0.1:8000/v1)", setting="model.base_url")
        if name not in (CUSTOM_PROVIDER, LOCAL_PROVIDER):
            valid = ", ".join([*PRESETS, LOCAL_PROVIDER, CUSTOM_PROVIDER])
            raise ConfigError(f"unknown provider {name!r} (from {source}); use one of {valid}", setting="model.provider")
        reason = local() if name == LOCAL_PROVIDER else None
        if reason is not None:
            raise ConfigError(f"provider 'local' (from {source}) cannot run: {reason}. Install it with "
                              "`pip install 'ctxagent[local]'`, or choose another provider.", setting="model.provider")
        values.setdefault("model.model", (name, "default", _DEFAULT))
        if name == LOCAL_PROVIDER:  # what the offline server allocates, so doctor and `context` show the real window
            from ctxagent.llm.local.bundle import DEFAULT_N_CTX, local_reply_tokens

            values.setdefault("model.context_window", (DEFAULT_N_CTX, "offline model", _PRESET))
            values.setdefault("model.max_output_tokens", (local_reply_tokens(), "offline model", _PRESET))
        return name
    preset = PRESETS[name]
    for key in _IDENTITY:  # only a provider set on purpose overrides lower levels
        if key in values and values[key][2] < rank and not source.startswith("auto"):
            del values[key]
    label = f"preset {name}"
    for field in ("model", "base_url", "context_window", "max_output_tokens", "send_reasoning_content", "empty_content",
                  "cache_control"):
        if field in preset:
            values.setdefault(f"model.{field}", (preset[field], label, _PRESET))
    for field, env_names in (("base_url", preset["base_url_env"]), ("api_key", preset["key_env"])):
        found = next((n for n in env_names if env.get(n, "").strip()), None)
        current_rank = values.get(f"model.{field}", (None, "", -1))[2]
        if found and current_rank < _ENVRANK:  # CTXAGENT_* variables and flags still win
            values[f"model.{field}"] = (env[found].strip(), f"env {found}", _ENVRANK)
    return name


def _choose_provider(values: dict[str, Value], env: Mapping[str, str], local: LocalCheck) -> Value:
    if "model.provider" in values:
        value, source, rank = values["model.provider"]
        return str(value).strip().lower(), source, rank
    if "model.base_url" in values:
        return CUSTOM_PROVIDER, f"implied by base_url ({values['model.base_url'][1]})", values["model.base_url"][2]
    for name in _AUTO_ORDER:
        found = next((n for n in (*PRESETS[name]["key_env"], *PRESETS[name]["base_url_env"]) if env.get(n, "").strip()), None)
        if found:
            return name, f"auto: {found} is set", _ENVRANK
    if local() is None:
        return LOCAL_PROVIDER, "auto: no provider configured; the offline local model is installed", _DEFAULT
    raise _no_provider_error(env)


def _no_provider_error(env: Mapping[str, str]) -> ConfigError:
    """`ctxagent.llm.local.bundle.no_model_error`: how to set a provider, `ctxagent doctor`, why the
    offline model cannot run, and how to install it (with the llama.cpp build flag)."""
    from ctxagent.llm.local.bundle import no_model_error

    return no_model_error(env=env)


def _provider_hint(values: dict[str, Value], env: Mapping[str, str], local: LocalCheck) -> bool:
    """True when something names a provider: a provider/base_url setting or a preset variable."""
    if "model.provider" in values or "model.base_url" in values:
        return True
    names = [n for name in _AUTO_ORDER for n in (*PRESETS[name]["key_env"], *PRESETS[name]["base_url_env"])]
    return any(env.get(n, "").strip() for n in names) or local() is None


def _local_unavailable_reason(env: Mapping[str, str]) -> str | None:
    """None when the offline model can be served (the `local` extra and a model file), else why not."""
    try:
        from ctxagent.llm.local.bundle import local_unavailable_reason
    except ImportError:
        return "the offline model support is not part of this build"
    return local_unavailable_reason(env=env)


def _build(values: dict[str, Value], files: list[str], trust: RepoConfigTrust,
           hooks: list[tuple[str, dict[str, Any]]], servers: list[ServerConfig]) -> Settings:
    nested: dict[str, dict[str, Any]] = {s: {} for s in _SECTIONS}
    for dotted, (value, _source, _rank) in values.items():
        section, key = dotted.split(".", 1)
        nested[section][key] = value
    sources = {k: source for k, (_v, source, _r) in sorted(values.items())}
    check_context({k.split(".", 1)[1]: (v, s) for k, (v, s, _r) in values.items() if k.startswith("context.")})
    settings = Settings(**_sections(nested, values), sources=sources, files=files, repo_trust=trust,
                        hook_tables=hooks, mcp_servers=servers)
    model = settings.model
    if model.max_output_tokens >= model.context_window:
        out, window = (values.get(f"model.{k}", (None, "defaults", 0))[1] for k in ("max_output_tokens", "context_window"))
        raise ConfigError(f"model.max_output_tokens = {model.max_output_tokens} (from {out}) leaves no room for the "
                          f"request in model.context_window = {model.context_window} (from {window}): the reply is "
                          "reserved out of the window. Lower max_output_tokens or raise context_window.",
                          setting="model.max_output_tokens")
    return settings


def _sections(nested: dict[str, dict[str, Any]], values: dict[str, Value]) -> dict[str, Any]:
    """Each section of `_SECTIONS` from its values (section -> key -> value): validated (strict,
    finite) when a file, the environment or a flag set one, else just constructed (defaults and
    presets are constants of the code: tests/config/test_settings_defaults.py), so a command
    left at them validates nothing (issue 16). Raises ConfigError for the first problem in
    section order, counting the first one of each other section."""
    built: dict[str, Any] = {}
    errors: list[tuple[tuple[str | int, ...], str]] = []
    for name, model in _SECTIONS.items():
        if model is ContextSettings:  # checked by the context engine's classes (check_context)
            built[name] = ContextSettings(nested[name])
        elif not any(rank >= _USER for key, (_v, _s, rank) in values.items() if key.startswith(name + ".")):
            built[name] = model(**nested[name])
        else:
            try:
                built[name] = validate(model, nested[name], strict=True, finite=True)
            except Invalid as exc:
                loc, msg = _located(exc, model)
                errors.append(((name, *loc), msg))
    if errors:
        raise ConfigError(_explain(errors, values), setting=".".join(map(str, errors[0][0][:2])))
    return built


def _located(exc: Invalid, model: type[Record]) -> tuple[tuple[str | int, ...], str]:
    """(where, what) of `exc`; a rule of `__post_init__` (loc (), "tools: name at least one
    tool...") is put at the field it names."""
    name, sep, rest = exc.msg.partition(": ")
    if not exc.loc and sep and name in field_names(model):
        return (name,), rest
    return exc.loc, exc.msg


def _explain(errors: list[tuple[tuple[str | int, ...], str]], values: dict[str, Value]) -> str:
    loc, msg = errors[0]
    dotted = ".".join(str(p) for p in loc[:2])
    value, source, _rank = values.get(dotted, ("(missing)", "defaults", 0))
    shown = "***" if dotted == "model.api_key" else shown_value(value)
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    section, _, key = dotted.partition(".")
    bounds = allowed_range(_SECTIONS[section], key) if section in _SECTIONS and key else None  # type: ignore[arg-type]
    allowed = f" (allowed: {bounds})" if bounds else ""
    return (f"invalid setting {dotted} = {shown} from {source}: {problem_text(msg, bool(bounds))}{allowed}. "
            f"Fix it there{more}.")
