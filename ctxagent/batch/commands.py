"""A task's own `setup` and `test` command lines, run in its working copy.

`sh -c LINE` in the copy's root with the read-only terminal's allow-list environment
(`ctxagent.shell.process.safe_env`: no API keys) and the user's PATH, stdin /dev/null, one
timeout on the whole process group, output capped (`ctxagent.exec.process.run_program`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from ctxagent.exec.process import run_program
from ctxagent.shell.process import safe_env

#: Characters of output kept in a result (head and tail).
OUTPUT_LIMIT = 8_000


def run_command(line: str, cwd: Path, *, timeout: float) -> dict[str, Any]:
    """Run `line` -> {"command", "exit_code" (None: killed or not started), "passed" (exit 0),
    "timed_out", "duration_s", "output" (stdout then stderr, capped)}; never raises for the
    command's own failure (KeyboardInterrupt passes)."""
    with tempfile.TemporaryDirectory(prefix="ctxagent-batch-home-") as home:
        env = safe_env(home=home, cwd=str(cwd))
        env["PATH"] = os.environ.get("PATH", env["PATH"])
        done = run_program(["sh", "-c", line], cwd=str(cwd), env=env, timeout=timeout, max_output=OUTPUT_LIMIT)
    output = done.stdout.render(OUTPUT_LIMIT // 2) + done.stderr.render(OUTPUT_LIMIT // 2)
    return {"command": line, "exit_code": done.exit_code, "passed": done.exit_code == 0, "timed_out": done.timed_out,
            "duration_s": round(done.duration_s, 3), "output": done.not_found or output}
