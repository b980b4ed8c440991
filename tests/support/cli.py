"""Run the real `ctxagent` entry point in-process and capture what it printed."""

from __future__ import annotations

from dataclasses import dataclass

from click.testing import CliRunner

from ctxagent.cli.main import run_cli


@dataclass
class Out:
    """What one `ctxagent` run printed, through the real entry point (`run_cli`)."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def invoke(args: list[str], input: str | None = None) -> Out:
    """`ctxagent ARGS` with `input` on stdin; never raises for a failing command."""
    with CliRunner().isolation(input=input) as (out, err, _):
        code = run_cli(args)
        return Out(code, out.getvalue().decode(), err.getvalue().decode())
