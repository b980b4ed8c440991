"""The permission decision for one command or python_exec call, as data: a `Gate`.

A tool that acts builds its Gate before it runs (`ExecPolicy.command_gate`,
`ExecPolicy.code_gate`); the agent's approval step reads it: `refusal` set means refuse
without asking (read-only mode, a deny rule), `ask` False means a rule allowed it, else
the user is asked with `subject` (the command or the code, shown in `language`) and
`details` (working directory, sandbox, mode). `key` is what an "always" answer covers
for the session. The tool runs only a gate marked `approved`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ctxagent.exec.rules import PermissionRules, always_key

Mode = Literal["read-only", "workspace-write"]
WRITE_MODE: Mode = "workspace-write"
MODE_HINT = ("commands outside the read-only list and python_exec run only in workspace-write mode: the user "
             "can restart ctxagent with --mode workspace-write (or set [agent] mode = \"workspace-write\")")


@dataclass
class Gate:
    """One call's permission: see the module doc. `rule`: the allow rule that applied."""

    tool: str
    subject: str
    language: Literal["bash", "python"]
    details: list[str] = field(default_factory=list)
    refusal: str = ""
    ask: bool = True
    key: str | None = None
    rule: str = ""
    approved: bool = False


@dataclass(frozen=True)
class ExecPolicy:
    """What may run and how, from the user's settings (plain data).

    mode: "read-only" (nothing runs) or "workspace-write"; rules: allow/deny; sandbox: "auto", "off" or "required";
    network: allowed in the sandbox; timeout_s: seconds per run; max_output_bytes: kept per stream;
    env_passthrough: variable names kept; python: the configured interpreter ("" none).
    """

    mode: Mode = "read-only"
    rules: PermissionRules = field(default_factory=PermissionRules)
    sandbox: Literal["auto", "off", "required"] = "auto"
    network: bool = False
    timeout_s: float = 120.0
    max_output_bytes: int = 32768
    env_passthrough: tuple[str, ...] = ()
    python: str = ""

    def command_gate(self, line: str, *, details: list[str]) -> Gate:
        """The gate of command line `line` (read-only mode, deny, allow or ask)."""
        gate = Gate("terminal", line, "bash", details=[*details, f"mode: {self.mode}"])
        if self.mode != WRITE_MODE:
            gate.refusal = f"terminal: `{line}` was not run: it is outside the read-only list, and {MODE_HINT}."
            return gate
        verdict = self.rules.check(line)
        gate.key = always_key(verdict.argv)
        if verdict.action == "deny":
            gate.refusal = (f"terminal: `{line}` was not run: the user's deny rule `{verdict.rule}` forbids it. "
                            "Do not retry it in another form; find another way or ask the user.")
        elif verdict.action == "allow":
            gate.ask, gate.rule = False, verdict.rule
        elif verdict.argv is None:
            gate.details.append(f"note: no rule can allow this line ({verdict.why}); only you can")
        return gate

    def code_gate(self, code: str, *, details: list[str]) -> Gate:
        """The gate of a python_exec call (read-only mode refuses; otherwise always asked)."""
        gate = Gate("python_exec", code, "python", details=[*details, f"mode: {self.mode}"], key="python_exec")
        if self.mode != WRITE_MODE:
            gate.refusal = f"python_exec was not run: {MODE_HINT}."
        return gate
