"""Settings built without a validator (start-up, issue 16) are the validated ones.

`load_settings` just constructs a section nobody set (msgspec's constructor validates
nothing), and validates a section with any value whole; `ctxagent tool` does not look for
the offline model. These tests hold both to what validating the same values gives, and
the user's files to the same errors as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.config import settings as settings_module
from ctxagent.config.settings import (
    NOT_LOOKED_FOR,
    ContextSettings,
    Settings,
    ToolSettings,
    load_settings,
    repo_config_path,
    user_config_path,
)
from ctxagent.config.trust import RepoConfigTrust
from ctxagent.errors import ConfigError
from ctxagent.llm.settings import ModelSettings
from ctxagent.mcp.settings import ServerConfig
from ctxagent.validation import Record, validate

MODELS: list[type[Record]] = [m for m in settings_module._SECTIONS.values()
                              if m is not ModelSettings and m is not ContextSettings]


def checked(model: type[Record], data: dict) -> Record:
    """`data` validated as the loader validates a section (strict, finite)."""
    return validate(model, data, strict=True, finite=True)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """No user config, no provider, no offline model."""
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "CTXAGENT_LOCAL_MODEL": "/nonexistent/model.gguf"}


def _with_user_file(tmp_path: Path, env: dict[str, str], text: str) -> tuple[Path, Path]:
    """(an empty repository, the user config file of `env` holding `text`)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    user = user_config_path(env)
    user.parent.mkdir(parents=True)
    user.write_text(text)
    return repo, user


@pytest.mark.parametrize("model", [*MODELS, RepoConfigTrust], ids=lambda m: m.__name__)
def test_the_defaults_without_a_validator_are_the_validated_defaults(model: type[Record]) -> None:
    built, validated = model(), checked(model, {})
    assert built == validated and built.to_dict() == validated.to_dict()
    mutable = [name for name in model.__struct_fields__ if isinstance(getattr(built, name), (list, dict))]
    for name in mutable:  # fresh lists, not shared ones
        assert getattr(built, name) is not getattr(model(), name), name


def test_a_model_with_a_required_field_has_no_defaults() -> None:
    with pytest.raises(TypeError, match="required"):
        ServerConfig()  # type: ignore[call-arg]


def test_the_model_of_no_provider_and_of_the_offline_model_equal_their_validation(tmp_path: Path,
                                                                                 env: dict[str, str]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    none = load_settings(repo, env=env, require_key=False, require_model=False).model
    assert none.model == "(none)"
    values = {"provider": "local", "model": "local", "context_window": 8192, "max_output_tokens": 256}
    for built, given in ((none, {"provider": none.provider, "model": none.model}), (ModelSettings(**values), values)):
        validated = checked(ModelSettings, given)
        assert built == validated and built.to_dict() == validated.to_dict()


def test_loaded_settings_equal_one_validation_of_the_same_values(tmp_path: Path, env: dict[str, str]) -> None:
    repo, _ = _with_user_file(tmp_path, env, '[agent]\nmax_steps = 7\n[exec]\ndeny = ["git push *"]\n'
                                             "[harness]\nagents_max_bytes = 100\n")
    loaded = load_settings(repo, env={**env, "CTXAGENT_BASE_URL": "http://127.0.0.1:9/v1"}, require_key=False)
    sections = {name: checked(model, getattr(loaded, name).to_dict())
                for name, model in settings_module._SECTIONS.items() if model is not ContextSettings}
    again = Settings(**sections, context=ContextSettings(loaded.context.to_dict()), sources=loaded.sources,
                     files=loaded.files, repo_trust=checked(RepoConfigTrust, loaded.repo_trust.to_dict()))
    assert loaded == again and loaded.to_dict() == again.to_dict()
    assert loaded.agent.max_steps == 7 and loaded.exec.deny == ["git push *"]
    assert loaded.tools == ToolSettings()  # no value set: the defaults


@pytest.mark.parametrize("table, key", [("agent", "max_steps = 0"), ("tools", "terminal_timeout_s = true"),
                                        ("exec", 'deny = ["a; b"]'), ("state", "nonsense = 1"),
                                        ("model", 'context_window = "big"')])
def test_a_bad_value_in_any_section_is_the_same_clear_error(tmp_path: Path, env: dict[str, str], table: str,
                                                             key: str) -> None:
    repo, user = _with_user_file(tmp_path, env, f"[{table}]\n{key}\n")
    for offline_model in (True, False):
        with pytest.raises(ConfigError) as err:
            load_settings(repo, env=env, require_key=False, require_model=False, offline_model=offline_model)
        assert str(user) in str(err.value) and (err.value.setting or "").startswith(table)


def test_two_bad_sections_are_counted_as_one_validation_counts_them(tmp_path: Path, env: dict[str, str]) -> None:
    repo, user = _with_user_file(tmp_path, env, "[agent]\nmax_steps = 0\n[tools]\npatch_max_files = -1\n")
    with pytest.raises(ConfigError) as err:
        load_settings(repo, env=env, require_key=False, require_model=False)
    assert "invalid setting agent.max_steps = 0" in str(err.value) and "(and 1 more problem(s))" in str(err.value)
    assert err.value.setting == "agent.max_steps"


def test_a_command_that_calls_no_model_does_not_look_for_the_offline_one(tmp_path: Path, env: dict[str, str]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    plain = {k: v for k, v in env.items() if k != "CTXAGENT_LOCAL_MODEL"}
    settings = load_settings(repo, env=plain, require_key=False, require_model=False, offline_model=False)
    assert settings.model.model == "(none)"
    asked = load_settings(repo, env={**plain, "CTXAGENT_PROVIDER": "local"}, require_key=False, require_model=False,
                          offline_model=False)
    assert asked.model.model == "(none)" and NOT_LOOKED_FOR in asked.sources["model.model"]
    keyed = load_settings(repo, env={**plain, "DEEPSEEK_API_KEY": "sk-0123456789abcdef"}, require_key=False,
                          require_model=False, offline_model=False)
    assert keyed.model.provider == "deepseek" and keyed.secrets() == ["sk-0123456789abcdef"]  # still redacted


def test_a_repository_file_is_still_checked_for_a_tool_command(tmp_path: Path, env: dict[str, str]) -> None:
    repo = tmp_path / "repo"
    repo_config_path(repo).parent.mkdir(parents=True)
    repo_config_path(repo).write_text("[tools]\nterminal_timeout_s = 0\n")
    with pytest.raises(ConfigError, match="tools.terminal_timeout_s"):
        load_settings(repo, env=env, require_key=False, require_model=False, offline_model=False)
