"""Every setting is checked when it loads (breaker F11): finite, in its documented range,
a known key in its table (with a did-you-mean), from a readable file.

Before: `terminal_timeout_s = inf` / `1e308` loaded fine and then every terminal call
failed with an internal OverflowError; `[context] foo = 1` and `max_tokens = -1` were
accepted silently; a `config.toml` that is a folder was ignored ("config files read:
none"); `ctxagent doctor` said all was well. Each is now a ConfigError naming the key
(or path), the value and the allowed range, and `doctor` exits 1.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ctxagent.config.settings import AgentSettings, ToolSettings, load_settings, repo_config_path, user_config_path
from ctxagent.errors import ConfigError
from ctxagent.llm.settings import ModelSettings
from ctxagent.validation import Record, fields
from tests.config.test_settings import NO_LOCAL, write
from tests.support.cli import invoke

SECTIONS: dict[str, type[Record]] = {"model": ModelSettings, "agent": AgentSettings, "tools": ToolSettings}


def numeric_fields() -> list[tuple[str, str, float | None, float | None, bool]]:
    """(section, key, low bound, high bound, low is inclusive) of every numeric setting."""
    rows = []
    for section, model in SECTIONS.items():
        for field in fields(model):
            if field.annotation not in (int, float, float | None, int | None):
                continue
            bounds = field.bounds
            low, inclusive = (bounds["ge"], True) if "ge" in bounds else (bounds.get("gt"), False)
            rows.append((section, field.name, low, bounds.get("le"), inclusive))
    return rows


NUMERIC = numeric_fields()


def _annotation(section: str, key: str) -> object:
    """The type of setting `section.key`, without its bounds."""
    return next(f.annotation for f in fields(SECTIONS[section]) if f.name == key)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "home").mkdir()
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), **NO_LOCAL,
            "CTXAGENT_BASE_URL": "http://127.0.0.1:9/v1", "CTXAGENT_MODEL": "m"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    return path


def load_user(repo: Path, env: dict[str, str], toml: str):
    write(user_config_path(env), toml)
    return load_settings(repo, env=env, require_key=False)


def test_F11_every_numeric_setting_has_an_upper_bound() -> None:
    assert {(s, k) for s, k, *_ in NUMERIC} >= {("tools", "terminal_timeout_s"), ("model", "timeout_s"),
                                                 ("tools", "terminal_max_output_bytes"), ("agent", "max_steps")}
    assert [(s, k) for s, k, _low, high, _inc in NUMERIC if high is None] == []


@pytest.mark.parametrize("section,key,low,high,inclusive", NUMERIC, ids=[f"{s}.{k}" for s, k, *_ in NUMERIC])
@pytest.mark.parametrize("bad", ["inf", "-inf", "nan", "1e308", "below", "above"])
def test_F11_non_finite_and_out_of_range_values_are_refused_naming_key_and_range(
        repo: Path, env: dict, section: str, key: str, low: float, high: float, inclusive: bool, bad: str) -> None:
    value = {"below": (low - 1 if inclusive else low), "above": high * 10 + 1}.get(bad, bad)
    if isinstance(value, str) and _annotation(section, key) in (int, int | None):
        value = value if value in ("inf", "-inf", "nan") else "1e308"
    with pytest.raises(ConfigError) as caught:
        load_user(repo, env, f"[{section}]\n{key} = {value}\n")
    message = str(caught.value)
    assert f"{section}.{key}" in message and str(user_config_path(env)) in message
    assert "allowed:" in message and "value <=" in message


@pytest.mark.parametrize("section,key,low,high,inclusive", NUMERIC, ids=[f"{s}.{k}" for s, k, *_ in NUMERIC])
def test_F11_the_bounds_themselves_are_accepted(repo: Path, env: dict, section: str, key: str, low: float,
                                                high: float, inclusive: bool) -> None:
    smallest = low if inclusive else (low + 1 if _annotation(section, key) is int else 0.001)
    # the reply is reserved out of the window (max_output_tokens < context_window): give the other its extreme
    companion = {"model.context_window": "max_output_tokens = 1\n", "model.max_output_tokens": "context_window = 100000000\n"}
    for value in (smallest, high):
        settings = load_user(repo, env, f"[{section}]\n{key} = {value!r}\n{companion.get(f'{section}.{key}', '')}")
        got = getattr(getattr(settings, section), key)
        assert math.isclose(got, value)


def test_F11_the_breaker_repro_is_a_config_error_and_the_terminal_never_sees_it(repo: Path, env: dict) -> None:
    with pytest.raises(ConfigError, match=r"tools\.terminal_timeout_s = inf .*a finite number, 0 < value <= 3,600"):
        load_user(repo, env, "[tools]\nterminal_timeout_s = inf\n")


@pytest.mark.parametrize("section,typo,suggestion", [
    ("model", "temprature", "temperature"), ("agent", "max_step", "max_steps"),
    ("tools", "terminal_timeout", "terminal_timeout_s"), ("context", "max_token", "max_tokens"),
    ("context", "compaction_trigger", "compaction_trigger_ratio"), ("context", "reserve", "reserve_ratio"),
])
def test_F11_unknown_keys_in_every_table_are_errors_with_a_did_you_mean(repo: Path, env: dict, section: str,
                                                                       typo: str, suggestion: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_user(repo, env, f"[{section}]\n{typo} = 1\n")
    message = str(caught.value)
    assert f"unknown setting '{section}.{typo}'" in message and f"did you mean '{suggestion}'?" in message
    assert f"valid keys in [{section}]" in message


def test_F11_an_unknown_context_key_without_a_near_match_lists_the_valid_keys(repo: Path, env: dict) -> None:
    with pytest.raises(ConfigError, match=r"unknown setting 'context\.foo'; valid keys in \[context\]: .*max_tokens"):
        load_user(repo, env, "[context]\nfoo = 1\n")


def test_F11_unknown_keys_in_the_repository_file_are_errors_too(repo: Path, env: dict) -> None:
    write(repo_config_path(repo), "[context]\nfoo = 1\n")
    with pytest.raises(ConfigError, match=r"unknown setting 'context\.foo'"):
        load_settings(repo, env=env, require_key=False)


@pytest.mark.parametrize("toml,key", [
    ("max_tokens = -1", "max_tokens"), ("max_tokens = 10", "max_tokens"), ("reserve_ratio = 0.95", "reserve_ratio"),
    ("min_relevance = nan", "min_relevance"), ("half_life_s = inf", "half_life_s"),
    ("dedup_threshold = 0", "dedup_threshold"), ("tool_result_max_chars = 5", "tool_result_max_chars"),
    ("layer_shares = {nope = 1.0}", "layer_shares"), ("compaction_trigger_ratio = 2", "compaction_trigger_ratio"),
    ("compaction_keep_tool_results = -1", "compaction_keep_tool_results"),
    ("compaction_summary_max_tokens = 3", "compaction_summary_max_tokens"),
    ("compaction_tail_ratio = inf", "compaction_tail_ratio"),
])
def test_F11_context_values_are_checked_when_the_settings_load(repo: Path, env: dict, toml: str, key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_user(repo, env, f"[context]\n{toml}\n")
    assert f"context.{key}" in str(caught.value) and str(user_config_path(env)) in str(caught.value)


def test_F11_valid_context_values_load(repo: Path, env: dict) -> None:
    settings = load_user(repo, env, "[context]\nmax_tokens = 9000\nreserve_ratio = 0.2\n"
                                    "compaction_trigger_ratio = 0.7\ncompaction_keep_messages = 4\n")
    assert settings.context.max_tokens == 9000 and settings.context.compaction_keep_messages == 4


@pytest.mark.parametrize("which", ["user", "repo"])
def test_F11_a_config_path_that_is_a_folder_is_an_error_naming_it(repo: Path, env: dict, which: str) -> None:
    path = user_config_path(env) if which == "user" else repo_config_path(repo)
    path.mkdir(parents=True)
    with pytest.raises(ConfigError, match=f"cannot read the config file {path}: Is a directory"):
        load_settings(repo, env=env, require_key=False)


def test_F11_a_dangling_config_link_is_an_error_naming_it(repo: Path, env: dict, tmp_path: Path) -> None:
    path = user_config_path(env)
    path.parent.mkdir(parents=True)
    path.symlink_to(tmp_path / "gone.toml")
    with pytest.raises(ConfigError, match=f"cannot read the config file {path}"):
        load_settings(repo, env=env, require_key=False)


def test_F16_a_symlinked_state_dir_is_a_config_error(repo: Path, env: dict, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (repo / ".ctxagent").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(ConfigError, match="symbolic link"):
        load_settings(repo, env=env, require_key=False)


@pytest.fixture
def cli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict) -> dict:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


@pytest.mark.parametrize("toml", ["[tools]\nterminal_timeout_s = inf\n", "[tools]\nterminal_timeout_s = 1e308\n",
                                  "[context]\nfoo = 1\n", "[context]\nmax_tokens = -1\n", "folder"])
def test_F11_doctor_reports_each_problem_and_exits_1(repo: Path, cli_home: dict, toml: str) -> None:
    path = user_config_path(cli_home)
    if toml == "folder":
        path.mkdir(parents=True)
    else:
        write(path, toml)
    out = invoke(["doctor", "--offline", "--repo", str(repo)])
    assert out.exit_code == 1, out.output
    assert "configuration problem" in out.output and str(path) in " ".join(out.output.split())


def test_F11_ctxagent_tool_terminal_says_which_setting_is_wrong(repo: Path, cli_home: dict) -> None:
    write(user_config_path(cli_home), "[tools]\nterminal_timeout_s = inf\n")
    out = invoke(["tool", "terminal", '{"command": "ls"}', "--repo", str(repo)])
    assert out.exit_code == 2 and "tools.terminal_timeout_s" in out.output
    assert "internal error" not in out.output and "OverflowError" not in out.output
