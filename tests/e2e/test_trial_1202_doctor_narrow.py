"""Trial of 2026-12-02: `ctxagent doctor` at 80 columns cut setting names
(`model.price_cached_prompt_per…`), the very names a user looks up to set. Every name is
whole at 60 and 80 columns, and the table fits the terminal (real CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import model_env
from tests.support.fake_openai import text

NAMES = ("model.price_cached_prompt_per_mtok", "model.price_completion_per_mtok", "tools.terminal_max_output_bytes",
         "agent.max_concurrent_subagents", "agent.subagent_max_task_tokens")


@pytest.mark.parametrize("columns", [60, 80])
def test_doctor_names_every_setting_whole(ctxagent, fake_server, repo: Path, columns: int) -> None:
    server = fake_server([text("unused")])
    proc = ctxagent("doctor", "--repo", str(repo), extra_env={**model_env(server), "COLUMNS": str(columns)})
    assert proc.returncode == 0, proc.stderr
    table = proc.stdout.split("config files read:")[0].splitlines()
    assert all(len(line.rstrip()) <= columns for line in table), [x for x in table if len(x.rstrip()) > columns]
    names = {line.split()[0] for line in table if line.strip() and line.split()[0][:1].isalpha()}
    assert set(NAMES) <= names, names
    assert not any(name.endswith("…") for name in names)
    assert any(line.split()[:2] == ["model.model", "fake-model"] for line in table)
