"""Config precedence (flags > env > repo > user > preset > default), sources, and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxagent.config.settings import load_settings, repo_config_path, user_config_path
from ctxagent.errors import ConfigError

KEY = "sk-test-0123456789abcdef"


#: Makes the offline model unavailable even where the `local` extra is installed (CI).
NO_LOCAL = {"CTXAGENT_LOCAL_MODEL": "/nonexistent/model.gguf"}


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """An environment whose HOME and XDG_CONFIG_HOME point at tmp (nothing from the real user)."""
    (tmp_path / "home").mkdir()
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), **NO_LOCAL}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    return path


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_precedence_flags_over_env_over_repo_over_user(repo: Path, home: dict) -> None:
    env = {**home, "CTXAGENT_BASE_URL": "http://127.0.0.1:9/v1"}
    write(user_config_path(env), '[model]\nmodel = "user-m"\ncontext_window = 1000\nmax_output_tokens = 500\ntemperature = 0.5\n'
          "[agent]\nmax_steps = 5\nwall_time_s = 10\n")
    write(repo_config_path(repo), '[model]\nmodel = "repo-m"\ncontext_window = 2000\n[agent]\nmax_steps = 4\n')
    s = load_settings(repo, env=env)
    assert (s.model.model, s.model.context_window, s.model.temperature) == ("repo-m", 2000, 0.5)
    assert (s.agent.max_steps, s.agent.wall_time_s) == (4, 10)  # a repo may lower a limit (config_trust)
    assert s.sources["model.model"] == str(repo_config_path(repo))
    assert s.sources["model.temperature"] == str(user_config_path(env))
    s = load_settings(repo, env={**env, "CTXAGENT_MODEL": "env-m"})
    assert s.model.model == "env-m" and s.sources["model.model"] == "env CTXAGENT_MODEL"
    s = load_settings(repo, flags={"model": "flag-m", "max_steps": 9, "base_url": None},
                      env={**env, "CTXAGENT_MODEL": "env-m"})
    assert (s.model.model, s.agent.max_steps) == ("flag-m", 9)
    assert s.sources["model.model"] == "flag --model"
    assert s.model.base_url == "http://127.0.0.1:9/v1" and s.model.provider == "custom"


def test_xdg_config_home_is_respected(repo: Path, home: dict) -> None:
    assert user_config_path(home) == Path(home["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    no_xdg = {"HOME": home["HOME"]}
    assert user_config_path(no_xdg) == Path(home["HOME"]) / ".config" / "ctxagent" / "config.toml"


def test_provider_preset_fills_url_model_and_key_env(repo: Path, home: dict) -> None:
    s = load_settings(repo, env={**home, "CTXAGENT_PROVIDER": "deepseek", "DEEPSEEK_API_KEY": KEY})
    assert s.model.base_url == "https://api.deepseek.com/v1"
    assert s.model.model == "deepseek-chat" and s.model.send_reasoning_content is True
    assert s.model.api_key.get_secret_value() == KEY
    assert s.sources["model.api_key"] == "env DEEPSEEK_API_KEY"
    assert s.sources["model.base_url"] == "preset deepseek"


@pytest.mark.parametrize("var, provider", [("OPENAI_API_KEY", "openai"), ("DEEPSEEK_API_KEY", "deepseek"),
                                           ("DASHSCOPE_API_KEY", "qwen")])
def test_standard_key_variable_picks_its_provider(repo: Path, home: dict, var: str, provider: str) -> None:
    s = load_settings(repo, env={**home, var: KEY})
    assert s.model.provider == provider and s.model.api_key.get_secret_value() == KEY
    assert var in s.sources["model.provider"]


def test_openai_base_url_and_key_as_the_sdk_reads_them(repo: Path, home: dict) -> None:
    s = load_settings(repo, env={**home, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"})
    assert (s.model.provider, s.model.base_url) == ("openai", "http://127.0.0.1:1/v1")


def test_ctxagent_api_key_beats_preset_variable(repo: Path, home: dict) -> None:
    s = load_settings(repo, env={**home, "OPENAI_API_KEY": "sk-openai-000000000", "CTXAGENT_API_KEY": KEY})
    assert s.model.api_key.get_secret_value() == KEY


def test_openai_key_never_sent_to_a_custom_host(repo: Path, home: dict) -> None:
    s = load_settings(repo, flags={"base_url": "http://127.0.0.1:2/v1"}, env={**home, "OPENAI_API_KEY": KEY})
    assert s.model.provider == "custom" and s.model.api_key is None


def test_provider_set_higher_replaces_lower_model_url_and_key(repo: Path, home: dict) -> None:
    env = {**home, "DEEPSEEK_API_KEY": KEY}
    write(user_config_path(env), '[model]\nprovider = "openai"\nmodel = "gpt-4o"\napi_key = "sk-openai-secret-1"\n'
          "temperature = 0.7\n")
    s = load_settings(repo, flags={"provider": "deepseek"}, env=env)
    assert s.model.model == "deepseek-chat"
    assert s.model.api_key.get_secret_value() == KEY  # the openai key never goes to deepseek
    assert s.model.temperature == 0.7  # tuning keys keep their precedence


def test_api_key_env_names_the_variable(repo: Path, home: dict) -> None:
    write(user_config_path(home), '[model]\nbase_url = "http://127.0.0.1:3/v1"\napi_key_env = "MY_KEY"\n')
    s = load_settings(repo, env={**home, "MY_KEY": KEY})
    assert s.model.api_key.get_secret_value() == KEY
    with pytest.raises(ConfigError, match="MY_KEY"):
        load_settings(repo, env=home)


@pytest.mark.parametrize("value", [f'"{KEY}"', "5"])
def test_api_key_env_given_the_key_itself_never_shows_it(repo: Path, home: dict, value: str) -> None:
    write(user_config_path(home), f'[model]\nbase_url = "http://127.0.0.1:3/v1"\napi_key_env = {value}\n')
    with pytest.raises(ConfigError) as info:
        load_settings(repo, env=home)
    assert KEY not in str(info.value) and "the name of an environment variable" in str(info.value)
    s = load_settings(repo, env=home, require_model=False)  # doctor shows the reason as the model's source
    assert KEY not in json.dumps(s.sources) and KEY not in repr(s)


def test_extra_body_with_a_toml_date_is_a_config_error_not_a_crash(repo: Path, home: dict) -> None:
    write(user_config_path(home), '[model]\nbase_url = "http://127.0.0.1:3/v1"\nextra_body = {opts = {when = 1979-05-27}}\n')
    with pytest.raises(ConfigError) as info:
        load_settings(repo, env=home)
    message = str(info.value)
    assert "model.extra_body" in message and "opts.when" in message and "string" in message


def test_bad_toml_names_the_file_and_the_fix(repo: Path, home: dict) -> None:
    write(repo_config_path(repo), '[model]\nmodel = "unterminated\n')
    with pytest.raises(ConfigError) as info:
        load_settings(repo, env={**home, "OPENAI_API_KEY": KEY})
    message = str(info.value)
    assert str(repo_config_path(repo)) in message and "line 2" in message and "TOML" in message


@pytest.mark.parametrize("text, needle", [
    ("[agent]\nmax_steps = \"many\"\n", "agent.max_steps"),
    ("[agent]\nmax_steps = 0\n", "agent.max_steps"),
    ("[model]\ncontext_window = -5\n", "model.context_window"),
    ("[model]\nmodle = \"x\"\n", "model.modle"),
    ("[agnet]\nmax_steps = 3\n", "agnet"),
    ("max_steps = 3\n", "max_steps"),
])
def test_invalid_value_or_unknown_key_is_a_config_error(repo: Path, home: dict, text: str, needle: str) -> None:
    write(repo_config_path(repo), text)
    with pytest.raises(ConfigError) as info:
        load_settings(repo, env={**home, "OPENAI_API_KEY": KEY})
    assert needle in str(info.value) and str(repo_config_path(repo)) in str(info.value)


@pytest.mark.parametrize("text, shown", [
    ("[agent]\nmax_steps = true\n", "agent.max_steps = true"),  # lax pydantic read it as 1 step
    ("[agent]\nmax_steps = 40.0\n", "agent.max_steps = 40.0"),
    ("[agent]\nauto_approve = 1\n", "agent.auto_approve = 1"),  # approving every tool call takes a real true
    ("[tools]\nterminal_timeout_s = false\n", "tools.terminal_timeout_s = false"),
    ("[model]\ntemperature = true\n", "model.temperature = true"),
    ("[model]\nmax_output_tokens = \"100\"\n", "model.max_output_tokens = '100'"),
])
def test_a_value_of_the_wrong_toml_type_is_a_config_error_not_a_conversion(repo: Path, home: dict, text: str, shown: str) -> None:
    write(user_config_path(home), text)
    with pytest.raises(ConfigError) as info:
        load_settings(repo, env={**home, "OPENAI_API_KEY": KEY})
    assert shown in str(info.value) and str(user_config_path(home)) in str(info.value)


@pytest.mark.parametrize("text, what", [
    ("[agent]\nmax_steps = 0\n", "agent.max_steps = 0 from {file}: out of range (allowed: an integer, "
                                   "0 < value <= 10,000). Fix it there."),
    ("[agent]\nmax_steps = true\n", "agent.max_steps = true from {file}: expected an integer, got a boolean (true "
                                      "or false) (allowed: an integer, 0 < value <= 10,000). Fix it there."),
    ("[agent]\nmode = \"write\"\n", 'agent.mode = \'write\' from {file}: not one of the choices (allowed: one of '
                                    '"read-only", "workspace-write"). Fix it there.'),
    ("[agent]\ntools = []\n", 'agent.tools = [] from {file}: name at least one tool, or use "all". Fix it there.'),
    ("[exec]\ndeny = [\"a; b\"]\n", "exec.deny = ['a; b'] from {file}: rule 'a; b' is not one plain command"),
    ("[model]\napi_key = 5\n", "model.api_key = *** from {file}: expected a string, got an integer. Fix it there."),
])
def test_an_invalid_value_says_which_key_what_is_wrong_and_what_is_allowed(repo: Path, home: dict, text: str,
                                                                            what: str) -> None:
    write(user_config_path(home), text)
    with pytest.raises(ConfigError) as info:
        load_settings(repo, env={**home, "CTXAGENT_BASE_URL": "http://127.0.0.1:9/v1"}, require_key=False)
    assert str(info.value).startswith("invalid setting " + what.format(file=user_config_path(home)))
    assert info.value.setting == what.split(" = ")[0] and "Expected" not in str(info.value)


def test_a_dotted_flag_of_no_setting_is_an_unknown_key(repo: Path, home: dict) -> None:
    with pytest.raises(ConfigError, match=r"flag --agent.max-step: unknown setting 'agent.max_step' \(did you mean "
                                          r"'max_steps'\?\)"):
        load_settings(repo, flags={"agent.max_step": 3}, env={**home, "OPENAI_API_KEY": KEY})


def test_the_context_table_reads_as_attributes_and_lists_its_items(repo: Path, home: dict) -> None:
    write(user_config_path(home), "[context]\nmax_tokens = 9000\ncompaction_keep_messages = 4\n")
    context = load_settings(repo, env={**home, "OPENAI_API_KEY": KEY}).context
    assert (context.max_tokens, getattr(context, "reserve_ratio", None)) == (9000, None)
    assert dict(context.items()) == {"max_tokens": 9000, "compaction_keep_messages": 4}
    with pytest.raises(AttributeError):
        context.max_tokens = 1


def test_an_untrusted_repo_config_of_the_wrong_type_is_an_error_too(repo: Path, home: dict) -> None:
    write(repo_config_path(repo), "[agent]\nmax_steps = true\n")
    with pytest.raises(ConfigError, match="agent.max_steps = true"):
        load_settings(repo, env={**home, "OPENAI_API_KEY": KEY})


def test_numbers_of_either_toml_kind_are_read_where_a_float_is_wanted(repo: Path, home: dict) -> None:
    write(user_config_path(home), "[tools]\nterminal_timeout_s = 5\n[model]\ntemperature = 1\n")
    s = load_settings(repo, env={**home, "OPENAI_API_KEY": KEY})
    assert (s.tools.terminal_timeout_s, s.model.temperature) == (5.0, 1.0)


def test_invalid_env_value_names_the_variable(repo: Path, home: dict) -> None:
    with pytest.raises(ConfigError, match="CTXAGENT_PROVIDER"):
        load_settings(repo, env={**home, "CTXAGENT_PROVIDER": "nosuch"})


def test_flag_value_error_names_the_flag(repo: Path, home: dict) -> None:
    with pytest.raises(ConfigError, match="flag --max-steps"):
        load_settings(repo, flags={"max_steps": -1}, env={**home, "OPENAI_API_KEY": KEY})


def test_missing_provider_says_how_to_set_one(repo: Path, home: dict) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(repo, env=home)
    message = str(info.value)
    assert "DEEPSEEK_API_KEY" in message and "--base-url" in message and "ctxagent[local]" in message


def test_hosted_provider_without_key_is_a_config_error(repo: Path, home: dict) -> None:
    with pytest.raises(ConfigError, match="DEEPSEEK_API_KEY"):
        load_settings(repo, env={**home, "CTXAGENT_PROVIDER": "deepseek"})
    s = load_settings(repo, env={**home, "CTXAGENT_PROVIDER": "deepseek"}, require_key=False)
    assert s.model.api_key is None


def test_secrets_and_repr_do_not_show_the_key(repo: Path, home: dict) -> None:
    s = load_settings(repo, env={**home, "OPENAI_API_KEY": KEY})
    assert s.secrets() == [KEY]
    assert KEY not in repr(s) and KEY not in json.dumps(s.to_dict())


def test_commands_without_a_model_get_a_placeholder(repo: Path, home: dict) -> None:
    write(repo_config_path(repo), "[tools]\nterminal_timeout_s = 5\n")
    s = load_settings(repo, env=home, require_model=False)
    assert s.model.model == "(none)" and s.tools.terminal_timeout_s == 5


def test_explicit_local_provider_that_cannot_run_says_why(repo: Path, home: dict) -> None:
    with pytest.raises(ConfigError, match="ctxagent\\[local\\]"):
        load_settings(repo, env={**home, "CTXAGENT_PROVIDER": "local"})


def test_a_reply_reservation_that_fills_the_window_is_a_config_error(repo: Path, home: dict) -> None:
    """New-user trial finding 9: max_output_tokens >= context_window used to pass `doctor` and
    then fail every `run` with "input budget of 1 tokens"; now it is refused at load, naming both."""
    write(user_config_path(home), '[model]\nprovider = "custom"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
                                  'context_window = 128000\nmax_output_tokens = 200000\n')
    with pytest.raises(ConfigError, match=r"model\.max_output_tokens = 200000 .* model\.context_window = 128000"):
        load_settings(repo, env=home)


def test_a_window_below_the_context_engines_smallest_is_a_config_error(repo: Path, home: dict) -> None:
    write(user_config_path(home), '[model]\nprovider = "custom"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
                                  'context_window = 10\nmax_output_tokens = 5\n')
    with pytest.raises(ConfigError, match=r"model\.context_window = 10 .*64 <= value"):
        load_settings(repo, env=home)



def test_output_instructions_that_are_no_text_are_a_config_error(repo: Path, home: dict) -> None:
    """`[context] output_instructions = 5` was accepted and rendered into every request as "5"."""
    write(user_config_path(home), '[model]\nprovider = "custom"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
                                  '[context]\noutput_instructions = 5\n')
    with pytest.raises(ConfigError, match=r"context\.output_instructions = 5 from .*must be text") as err:
        load_settings(repo, env=home)
    assert err.value.setting == "context.output_instructions"
