"""Issue 15, item 13: the default cost cap acts with the shipped prices of a preset's default
model, doctor says in one line when it cannot (no prices), and prices set in settings count,
through the real CLI against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import API_KEY, flat, model_env
from tests.support.fake_openai import text, tool_calls

LS = ("terminal", json.dumps({"command": "ls"}))


def openai_env(server) -> dict[str, str]:
    """The `openai` preset (default model gpt-4o-mini) pointed at the fake server."""
    return {"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": server.base_url}


def user_config(repo: Path, body: str) -> None:
    path = repo.parent / "home" / ".config" / "ctxagent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")


def test_13_doctor_says_the_cap_is_inactive_without_prices(ctxagent, fake_server, repo: Path) -> None:
    proc = ctxagent("doctor", "--offline", "--repo", str(repo), extra_env=model_env(fake_server([])))
    assert proc.returncode == 0, proc.stderr
    [line] = [ln for ln in flat(proc.stdout).split("cost cap:")[1:]]
    assert line.strip().startswith("inactive, no prices for model 'fake-model' (provider custom)")
    assert "model.price_cached_prompt_per_mtok" in line


def test_13_doctor_names_the_shipped_prices_of_a_preset(ctxagent, fake_server, repo: Path) -> None:
    proc = ctxagent("doctor", "--offline", "--repo", str(repo), extra_env=openai_env(fake_server([])))
    assert proc.returncode == 0, proc.stderr
    assert ("cost cap: agent.max_cost_usd = 2 per turn, counted at $0.15 in, $0.075 cached, $0.6 out per million "
            "tokens (prices.json of") in flat(proc.stdout)


def test_13_the_default_cap_stops_a_turn_at_the_shipped_prices(ctxagent, fake_server, repo: Path) -> None:
    # gpt-4o (in the table beside the default gpt-4o-mini): 900k in at $2.50 + 10k out at $10 = $2.35 > $2,
    # below max_task_tokens (2M), which gpt-4o-mini's prices never reach $2 within
    usage = {"prompt_tokens": 900_000, "completion_tokens": 10_000}
    server = fake_server([tool_calls([LS], usage=usage), text("never asked for")])
    env = {**openai_env(server), "CTXAGENT_MODEL": "gpt-4o"}
    proc = ctxagent("run", "List the files.", "--repo", str(repo), "--json", extra_env=env)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["reason"] == "max_cost" and abs(result["cost_usd"] - 2.35) < 1e-9
    assert len(server.requests()) == 1


def test_13_prices_in_settings_make_the_cap_act_for_any_model(ctxagent, fake_server, repo: Path) -> None:
    user_config(repo, "[model]\nprice_prompt_per_mtok = 100.0\nprice_completion_per_mtok = 100.0\n")
    server = fake_server([tool_calls([LS], usage={"prompt_tokens": 25_000, "completion_tokens": 0}), text("no")])
    proc = ctxagent("run", "List the files.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "max_cost" in proc.stderr and "$2.5000" in proc.stderr
