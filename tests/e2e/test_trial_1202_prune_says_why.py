"""Trial of 2026-12-02: `ctxagent sessions prune --keep 3` with 11 sessions said only
"nothing to prune" (every one had been used in the last hour, which prune never removes).
It says how many sessions there are and what kept them (real CLI; the fake server as the model)."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import model_env
from tests.support.fake_openai import text


def test_nothing_to_prune_says_why(ctxagent, fake_server, repo: Path) -> None:
    assert ctxagent("sessions", "prune", "--keep", "1", "--repo", str(repo)).stdout.strip() == \
        "nothing to prune: no session recorded"
    server = fake_server([text("one"), text("two")])
    for task in ("first", "second"):
        assert ctxagent("run", task, "--repo", str(repo), extra_env=model_env(server)).returncode == 0
    proc = ctxagent("sessions", "prune", "--keep", "1", "--repo", str(repo))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ("nothing to prune: 2 session(s); 2 used in the last hour (never removed), "
                                   "the 1 newest kept (--keep 1)")
    aged = ctxagent("sessions", "prune", "--older-than", "30d", "--repo", str(repo))
    assert aged.stdout.strip() == "nothing to prune: 2 session(s); 2 used in the last hour (never removed)"
    assert len(list((repo / ".ctxagent" / "sessions").glob("*.jsonl"))) == 2
