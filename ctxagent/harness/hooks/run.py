"""Run one hook command: `bash -c COMMAND` in the repository, the event's JSON on stdin, its
own process group killed at the timeout, output capped and redacted (`exec.process.run_program`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from ctxagent.exec.process import run_program
from ctxagent.redaction import redact

MAX_OUTPUT_BYTES = 64 * 1024
"""Bytes kept of a hook's stdout and of its stderr (head and tail)."""


@dataclass(frozen=True)
class HookRun:
    """What one hook command did: exit_code (None when killed at its timeout or not started),
    stdout and stderr (text, redacted), timed_out, duration_s (seconds), not_found (why it could not start)."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    duration_s: float = 0.0
    not_found: str = ""


def hook_environment(repo: Path, secrets: Iterable[str], base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The user's environment (`base`, default os.environ) without any variable holding one of
    `secrets` (the model's API key), plus CTXAGENT_PROJECT_DIR and CLAUDE_PROJECT_DIR (the repository)."""
    hidden = {s for s in secrets if s}
    env = {k: v for k, v in (os.environ if base is None else base).items() if v not in hidden}
    env["CTXAGENT_PROJECT_DIR"] = env["CLAUDE_PROJECT_DIR"] = str(repo)
    return env


def run_hook(command: str, payload: Mapping[str, Any], *, repo: Path, env: Mapping[str, str], timeout_s: float,
             secrets: Iterable[str] = ()) -> HookRun:
    """Run `command` with `payload` as JSON on stdin; never raises for the hook's own failures
    (KeyboardInterrupt passes). Output is redacted of `secrets` and key-shaped strings."""
    data = json.dumps(payload, ensure_ascii=False, sort_keys=True).encode("utf-8")
    done = run_program(["bash", "-c", command], cwd=str(repo), env=dict(env), timeout=timeout_s,
                       max_output=MAX_OUTPUT_BYTES, stdin_bytes=data)
    known = list(secrets)
    return HookRun(exit_code=done.exit_code, stdout=redact(done.stdout.render(), known),
                   stderr=redact(done.stderr.render(), known), timed_out=done.timed_out,
                   duration_s=done.duration_s, not_found=done.not_found)
