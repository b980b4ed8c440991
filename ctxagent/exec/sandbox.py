"""The sandbox of approved commands and python_exec, with bubblewrap (`bwrap`).

The whole file system read-only, the workspace and a scratch HOME/TMPDIR writable,
`.ctxagent` read-only, network off unless `network = true`. Without a working bwrap,
commands run unsandboxed after approval and `Sandbox.describe` says so (docs/exec.md,
"The sandbox"; the terminal's jail is `ctxagent.shell.jail`).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Literal

from ctxagent.errors import ToolRefusedError
from ctxagent.shell.jail import bwrap_trial
from ctxagent.shell.programs import find_program

SandboxMode = Literal["auto", "off", "required"]
_lock = threading.Lock()
_works: bool | None = None


@dataclass(frozen=True)
class Sandbox:
    """The sandbox in force: `kind` "bubblewrap" or "none"; `network`: allowed or not;
    `reason`: why there is none ("" with bubblewrap)."""

    kind: Literal["bubblewrap", "none"]
    network: bool = False
    reason: str = ""

    def describe(self) -> str:
        """One line for the approval prompt and doctor."""
        if self.kind == "bubblewrap":
            net = "network on (config network = true)" if self.network else "network off"
            return f"bubblewrap: workspace writable, rest of the file system read-only, {net}"
        return f"NONE ({self.reason}): the command runs unsandboxed, with your permissions"

    def prefix(self, *, workspace: str, cwd: str, scratch: str) -> list[str]:
        """The argv to put before the program (ends with `--`); [] without a sandbox."""
        if self.kind != "bubblewrap":
            return []
        return bwrap_prefix(workspace=workspace, cwd=cwd, scratch=scratch, network=self.network)


def choose(mode: SandboxMode = "auto", *, network: bool = False) -> Sandbox:
    """The sandbox for `mode`: "auto" bubblewrap when it works, else none; "off" none;
    "required" bubblewrap or ToolRefusedError saying how to get it."""
    if mode == "off":
        return Sandbox("none", network=True, reason="sandbox = \"off\" in the config")
    if bwrap_works():
        return Sandbox("bubblewrap", network=network)
    if mode == "required":
        raise ToolRefusedError("the sandbox is required (sandbox = \"required\") but bubblewrap does not work "
                               "here; install bubblewrap (apt install bubblewrap) or set sandbox = \"auto\"")
    why = "bubblewrap is not installed" if find_program("bwrap") is None else "bubblewrap cannot run here"
    return Sandbox("none", network=True, reason=why)


def bwrap_prefix(*, workspace: str, cwd: str, scratch: str, network: bool = False) -> list[str]:
    """bwrap argv: `/` read-only, `workspace` and `scratch` writable, `.ctxagent` read-only."""
    args = [find_program("bwrap") or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--bind", workspace, workspace, "--bind", scratch, scratch]
    state = os.path.join(workspace, ".ctxagent")
    if os.path.isdir(state) and not os.path.islink(state):
        args += ["--ro-bind", state, state]
    if not network:
        args.append("--unshare-net")
    args += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--chdir", cwd]
    if os.geteuid() == 0:
        args += ["--cap-drop", "ALL"]
    return args + ["--"]


def bwrap_works() -> bool:
    """True when bwrap is installed and a trial run of this sandbox succeeds (cached)."""
    global _works
    with _lock:
        if _works is None:
            _works = _probe()
        return _works


def _probe() -> bool:
    return bwrap_trial(lambda d: bwrap_prefix(workspace=d, cwd=d, scratch=d))
