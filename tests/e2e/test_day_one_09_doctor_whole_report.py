"""Issue 15, item 9: `ctxagent doctor` with no provider prints the provider problem first,
then the whole report (settings and their sources, workspace, state folder, ripgrep,
sandbox, commands, checkpoints), and exits non-zero. The real CLI in a subprocess."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import flat, model_env

REPORT = ("setting", "agent.max_steps", "tools.patch_max_files", "config files read", "workspace:",
          "state folder:", "repository config:", "rg:", "bwrap:", "commands: mode read-only", "checkpoints:")


def test_doctor_without_a_provider_prints_the_problem_then_everything(ctxagent, repo: Path) -> None:
    proc = ctxagent("doctor", "--repo", str(repo))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert out.startswith("configuration problem: no model provider is configured"), out[:300]
    for needle in REPORT:
        assert needle in out, needle
    assert out.index("configuration problem") < out.index("workspace:")
    text = flat(out)
    assert f"workspace: {repo.resolve()} (--repo)" in text
    assert "model.model │ (none) │ no provider configured" in text
    assert "endpoint: not checked (no model provider" in text
    assert "Traceback" not in out + proc.stderr


def test_doctor_names_the_sources_of_settings_under_the_problem(ctxagent, repo: Path, env) -> None:
    config = Path(env["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[agent]\nmax_steps = 7\n", encoding="utf-8")
    proc = ctxagent("doctor", "--repo", str(repo), "--offline", extra_env={"COLUMNS": "400"})
    assert proc.returncode == 1
    text = flat(proc.stdout)
    assert f"agent.max_steps │ 7 │ {config}" in text and f"config files read: {config}" in text


def test_doctor_with_an_unknown_provider_still_shows_the_report(ctxagent, repo: Path) -> None:
    proc = ctxagent("doctor", "--repo", str(repo), extra_env={"CTXAGENT_PROVIDER": "nosuch"})
    assert proc.returncode == 1
    assert proc.stdout.startswith("configuration problem: unknown provider 'nosuch'")
    assert "checkpoints:" in proc.stdout and "state folder:" in proc.stdout


def test_doctor_with_broken_toml_says_so_and_shows_what_needs_no_settings(ctxagent, repo: Path) -> None:
    (repo / ".ctxagent").mkdir()
    (repo / ".ctxagent" / "config.toml").write_text("[agent\n", encoding="utf-8")
    proc = ctxagent("doctor", "--repo", str(repo))
    assert proc.returncode == 1
    assert proc.stdout.startswith("configuration problem: cannot parse")
    assert "checkpoints:" in proc.stdout and "workspace:" in proc.stdout
    assert "agent.max_steps" not in proc.stdout  # no settings to show


def test_doctor_with_a_working_endpoint_has_no_problem_line(ctxagent, fake_server, repo: Path) -> None:
    proc = ctxagent("doctor", "--repo", str(repo), extra_env=model_env(fake_server([])))
    assert proc.returncode == 0, proc.stdout
    assert "configuration problem" not in proc.stdout and "endpoint: ok" in flat(proc.stdout)
    assert "workspace:" in proc.stdout and "checkpoints:" in proc.stdout
