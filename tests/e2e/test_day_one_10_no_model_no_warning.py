"""Issue 15, item 10: commands that need no model (`apply`, `tool apply_patch`, `tool
terminal`, `context`, `notes`, `todo`, `sessions`, `checkpoints`, `undo`) never warn about
the provider, whether none is set or the one set cannot be used. The real CLI in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import APP_PY

PATCH = ("*** Begin Patch\n*** Update File: src/app.py\n@@ def greet(name):\n"
         '-    return "hello " + name\n+    return "Hello, " + name\n*** End Patch\n')
#: No provider, and providers that are set but cannot be used: none may show through.
PROVIDERS = [{}, {"CTXAGENT_PROVIDER": "local"}, {"CTXAGENT_PROVIDER": "nosuch"}, {"CTXAGENT_PROVIDER": "custom"},
             {"CTXAGENT_PROVIDER": "deepseek"}]


def _quiet(proc, code: int = 0) -> None:
    assert proc.returncode == code, proc.stdout + proc.stderr
    for word in ("provider", "settings not loaded", "offline model", "OPENAI_API_KEY"):
        assert word not in proc.stderr, proc.stderr


@pytest.mark.parametrize("provider", PROVIDERS, ids=["none", "local", "unknown", "custom", "no-key"])
def test_apply_says_nothing_about_the_model(ctxagent, repo: Path, tmp_path: Path, provider: dict) -> None:
    (tmp_path / "fix.patch").write_text(PATCH, encoding="utf-8")
    proc = ctxagent("apply", str(tmp_path / "fix.patch"), "--yes", "--repo", str(repo), extra_env=provider)
    _quiet(proc)
    assert '"Hello, " + name' in (repo / "src" / "app.py").read_text(encoding="utf-8")
    assert "M src/app.py (+1 -1)" in proc.stdout


@pytest.mark.parametrize("provider", PROVIDERS[:3], ids=["none", "local", "unknown"])
def test_tool_apply_patch_says_nothing_about_the_model(ctxagent, repo: Path, provider: dict) -> None:
    proc = ctxagent("tool", "apply_patch", json.dumps({"patch": PATCH}), "--repo", str(repo), extra_env=provider)
    _quiet(proc)
    assert "Patch applied" in proc.stdout


def test_every_command_without_a_model_is_quiet_about_it(ctxagent, repo: Path) -> None:
    bad = {"CTXAGENT_PROVIDER": "nosuch"}
    for args in (["tool", "terminal", '{"command": "ls"}'], ["context", "greet"], ["notes", "list"],
                 ["todo", "list"], ["sessions"], ["checkpoints"], ["memory", "list"]):
        _quiet(ctxagent(*args, "--repo", str(repo), extra_env=bad))
    _quiet(ctxagent("undo", "--repo", str(repo), extra_env=bad))
    assert (repo / "src" / "app.py").read_text(encoding="utf-8") == APP_PY


def test_a_broken_setting_unrelated_to_the_model_is_one_short_line(ctxagent, repo: Path, tmp_path: Path) -> None:
    (repo / ".ctxagent").mkdir()
    (repo / ".ctxagent" / "config.toml").write_text("[tools]\npatch_max_files = 0\n", encoding="utf-8")
    (tmp_path / "fix.patch").write_text(PATCH, encoding="utf-8")
    proc = ctxagent("apply", str(tmp_path / "fix.patch"), "--yes", "--repo", str(repo))
    assert proc.returncode == 0, proc.stderr
    [warning] = [line for line in proc.stderr.splitlines() if line.strip()]
    assert warning.startswith("warning: default patch limits used") and "tools.patch_max_files" in warning
    assert "ctxagent doctor" in warning


def test_run_still_explains_the_missing_provider(ctxagent, repo: Path) -> None:
    proc = ctxagent("run", "x", "--repo", str(repo))
    assert proc.returncode == 2 and "no model provider is configured" in proc.stderr
