"""`load_settings(require_model=False)`: commands that need no model never fail for the
provider (issue 15, item 10), while every other setting is still checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.config.settings import load_settings
from ctxagent.errors import ConfigError


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "CTXAGENT_LOCAL_MODEL": str(tmp_path / "absent.gguf")}


@pytest.mark.parametrize("env, why", [
    ({}, "no provider configured"),
    ({"CTXAGENT_PROVIDER": "nosuch"}, "not usable: unknown provider 'nosuch'"),
    ({"CTXAGENT_PROVIDER": "local"}, "not usable: provider 'local'"),
    ({"CTXAGENT_PROVIDER": "custom"}, "not usable: provider 'custom' needs a base_url"),
])
def test_no_usable_provider_is_the_model_none_with_the_reason(tmp_path: Path, home: dict, env: dict, why: str) -> None:
    settings = load_settings(tmp_path, env={**home, **env}, require_key=False, require_model=False)
    assert settings.model.model == "(none)" and settings.sources["model.model"].startswith(why)
    assert settings.tools.patch_max_files == 50


def test_api_key_env_unset_is_a_model_problem_only(tmp_path: Path, home: dict) -> None:
    user = Path(home["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[model]\napi_key_env = "NOPE_KEY"\n[tools]\npatch_max_files = 3\n', encoding="utf-8")
    settings = load_settings(tmp_path, env={**home, "CTXAGENT_BASE_URL": "http://127.0.0.1:9/v1"},
                             require_key=False, require_model=False)
    assert settings.model.model == "(none)" and "NOPE_KEY" in settings.sources["model.model"]
    assert settings.tools.patch_max_files == 3


def test_a_usable_provider_is_kept(tmp_path: Path, home: dict) -> None:
    settings = load_settings(tmp_path, env={**home, "CTXAGENT_BASE_URL": "http://127.0.0.1:9/v1"},
                             require_key=False, require_model=False)
    assert settings.model.provider == "custom" and settings.model.base_url == "http://127.0.0.1:9/v1"


def test_other_bad_settings_still_raise(tmp_path: Path, home: dict) -> None:
    (tmp_path / ".ctxagent").mkdir()
    (tmp_path / ".ctxagent" / "config.toml").write_text("[tools]\npatch_max_files = 0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="tools.patch_max_files") as caught:
        load_settings(tmp_path, env=home, require_key=False, require_model=False)
    assert caught.value.setting == "tools.patch_max_files"


def test_a_bad_model_value_that_is_not_the_provider_still_raises(tmp_path: Path, home: dict) -> None:
    env = {**home, "CTXAGENT_BASE_URL": "http://127.0.0.1:9/v1"}
    (tmp_path / ".ctxagent").mkdir()
    (tmp_path / ".ctxagent" / "config.toml").write_text("[model]\ncontext_window = -5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="model.context_window"):
        load_settings(tmp_path, env=env, require_key=False, require_model=False)


def test_run_still_needs_the_model(tmp_path: Path, home: dict) -> None:
    with pytest.raises(ConfigError, match="no model provider is configured"):
        load_settings(tmp_path, env=home, require_key=False)
