"""An approved unsandboxed command cannot read ctxagent's own environment (API keys) from
/proc/PPID/environ (trial: it printed CTXAGENT_API_KEY); root can, and the tool result is
redacted for that case (tests/agent/test_toolcalls.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PARENT = r"""
import subprocess, sys
from ctxagent.cli.main import _not_dumpable
_not_dumpable()
child = "import os; print(open('/proc/%d/environ', 'rb').read().count(b'CTXAGENT_API_KEY'))" % __import__('os').getpid()
r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
print(r.stdout.strip() or r.stderr.strip().splitlines()[-1])
"""


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_DUMPABLE is Linux's")
@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every process's environ; the result redaction covers it")
def test_a_child_command_cannot_read_ctxagents_environment() -> None:
    env = {**os.environ, "CTXAGENT_API_KEY": "sk-trial-0123456789abcdef"}
    out = subprocess.run([sys.executable, "-c", PARENT], capture_output=True, text=True, env=env, timeout=60)
    assert "PermissionError" in out.stdout, out.stdout + out.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_DUMPABLE is Linux's")
def test_ctxagent_is_not_dumpable_after_start() -> None:
    code = "from ctxagent.cli.main import _not_dumpable; import ctypes; _not_dumpable(); print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "0", out.stdout + out.stderr  # PR_GET_DUMPABLE = 3
