"""The top-level handler: exit codes, no tracebacks, crash logs, broken command modules."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from ctxagent.cli import main as cli_main
from ctxagent.errors import ConfigError, CtxAgentError, LLMError


@pytest.mark.parametrize("exc, code", [(ConfigError("x"), 2), (LLMError("x"), 4), (CtxAgentError("x"), 1),
                                       (KeyboardInterrupt(), 130)])
def test_exit_code_for(exc: BaseException, code: int) -> None:
    assert cli_main.exit_code_for(exc) == code


def test_unknown_command_and_bad_option_are_usage_errors(capsys: pytest.CaptureFixture) -> None:
    assert cli_main.run_cli(["nosuch"]) == 2
    assert cli_main.run_cli(["run"]) == 2
    assert "Missing argument" in capsys.readouterr().err


def test_help_lists_every_command(capsys: pytest.CaptureFixture) -> None:
    assert cli_main.run_cli(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("run", "chat", "sessions", "tool", "doctor"):
        assert f"  {name} " in out


def test_crash_log_holds_the_traceback_without_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-crash-secret-0123456789")
    try:
        raise RuntimeError("failed with sk-crash-secret-0123456789")
    except RuntimeError as exc:
        path = cli_main.write_crash_log(exc)
    text = path.read_text()
    assert path.parent == tmp_path / "ctxagent" / "crashes"
    assert "RuntimeError" in text and "Traceback" in text and "sk-crash-secret" not in text


def test_a_broken_command_module_does_not_take_the_cli_down(capsys: pytest.CaptureFixture) -> None:
    group = click.Group()
    original = cli_main.COMMAND_MODULES
    try:
        cli_main.COMMAND_MODULES = ("ctxagent.cli.no_such_cmd", "ctxagent.cli.sessions_cmd")
        cli_main.register_commands(group)
    finally:
        cli_main.COMMAND_MODULES = original
    assert set(group.commands) == {"no_such", "sessions"}
    assert group.main(["no_such"], standalone_mode=False) == 1
    assert "could not load" in capsys.readouterr().err


def test_python_dash_m_ctxagent_runs_the_cli() -> None:
    import os
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "ctxagent", "--help"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert proc.returncode == 0 and "undo" in proc.stdout and "checkpoints" in proc.stdout, proc.stderr
