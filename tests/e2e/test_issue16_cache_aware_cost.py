"""Issue 16, cache-aware cost, through the real CLI against the fake server: cached tokens are
billed at the provider's cache price (DeepSeek's hit/miss fields), `max_cost_usd` counts what the
bill says, `/usage` and `/cost` show the cached share and the saving, and `cache_control` marks
the end of the stable prefix only when the setting asks for it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import API_KEY, flat, model_env
from tests.support.fake_openai import text, tool_calls

LS = ("terminal", json.dumps({"command": "ls"}))
#: One DeepSeek call: 1M prompt tokens of which 90% cache hits, 10k out.
DEEPSEEK_USAGE = {"prompt_tokens": 1_000_000, "completion_tokens": 10_000, "prompt_cache_hit_tokens": 900_000,
                  "prompt_cache_miss_tokens": 100_000}
BILL = 100_000 * 0.28e-6 + 900_000 * 0.028e-6 + 10_000 * 0.42e-6  # $0.0574; at full price $0.2842


def deepseek_env(server) -> dict[str, str]:
    return {"DEEPSEEK_API_KEY": API_KEY, "DEEPSEEK_BASE_URL": server.base_url}


def user_config(repo: Path, body: str) -> None:
    path = repo.parent / "home" / ".config" / "ctxagent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")


def test_16_cached_tokens_cost_the_cache_price_and_the_cap_counts_the_bill(ctxagent, fake_server, repo: Path) -> None:
    user_config(repo, "[agent]\nmax_cost_usd = 0.1\n")  # full price would stop after the first call
    server = fake_server([tool_calls([LS], usage=DEEPSEEK_USAGE), text("Two files.", usage=DEEPSEEK_USAGE)])
    proc = ctxagent("run", "What is here?", "--repo", str(repo), "--json", extra_env=deepseek_env(server))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    usage = [e for e in events if e["type"] == "usage"]
    assert [round(e["cost_usd"], 6) for e in usage] == [round(BILL, 6)] * 2
    assert usage[0]["cached_tokens"] == 900_000
    assert abs(events[-1]["cost_usd"] - 2 * BILL) < 1e-9 and events[-1]["answer"] == "Two files."


def test_16_usage_and_cost_show_the_cached_share_and_the_saving(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([text("Hi.", usage=DEEPSEEK_USAGE)])
    proc = ctxagent("chat", "--repo", str(repo), input="hello\n/usage\n/cost\n/exit\n", extra_env=deepseek_env(server))
    assert proc.returncode == 0, proc.stderr
    shown = flat(proc.stdout)
    assert shown.count("cache hits 900,000, 90% of input") == 2
    saved = 900_000 * (0.28 - 0.028) / 1e6
    assert shown.count(f"cost so far ${BILL:.4f}, the cache saved ${saved:.4f}") == 2
    assert "$0.28 in, $0.028 cached, $0.42 out per million tokens (prices.json of" in shown


def test_16_cache_control_marks_the_system_and_last_history_message(ctxagent, fake_server, repo: Path) -> None:
    user_config(repo, "[model]\ncache_control = true\n")
    server = fake_server([tool_calls([LS]), text("Done.")])
    proc = ctxagent("run", "What is here?", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    first, second = server.requests()
    mark = {"type": "ephemeral"}
    for request in (first, second):
        system = request["messages"][0]
        assert system["role"] == "system" and system["content"][-1]["cache_control"] == mark
    assert all(not isinstance(m["content"], list) for m in first["messages"][1:])  # only the task follows
    marked = [m for m in second["messages"][1:] if isinstance(m.get("content"), list)]
    assert len(marked) == 1 and marked[0]["role"] in ("tool", "assistant")
    assert marked[0]["content"][-1]["cache_control"] == mark
    assert all(isinstance(m["content"], str) for m in second["messages"] if m["role"] == "user")


def test_16_no_cache_control_unless_asked(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([tool_calls([LS]), text("Done.")])
    proc = ctxagent("run", "What is here?", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    for request in server.requests():  # (the test's own name is in the workspace path: look at the shapes)
        assert all(isinstance(m.get("content"), (str, type(None))) for m in request["messages"])
