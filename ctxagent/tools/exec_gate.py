"""What the tools that run commands or code share: the gate they hand to the approval
step, and the check that a run was approved (`GatedRuns`).

The agent calls `tool.gate(args)` first (see `ctxagent.agent.toolcalls`) and marks the
returned `ctxagent.exec.gate.Gate` approved when the user (or a rule) said yes; `_run`
then runs only that exact call. A library caller without the agent passes `ask`
(`Gate -> bool`) to the tool instead; without it, nothing runs unapproved.
"""

from __future__ import annotations

from typing import Callable

from ctxagent.errors import ToolRefusedError
from ctxagent.exec.gate import Gate

Ask = Callable[[Gate], bool]


class GatedRuns:
    """The gate of the call being approved, and the check before running it."""

    def __init__(self, ask: Ask | None = None) -> None:
        self.ask = ask
        self._pending: tuple[str, Gate] | None = None

    def hold(self, subject: str, gate: Gate) -> Gate:
        """Remember `gate` for the call whose command or code is `subject`; return it."""
        self._pending = (subject, gate)
        return gate

    def check(self, subject: str, make: Callable[[], Gate]) -> Gate:
        """The approved gate for `subject`. Raises ToolRefusedError when it was refused or
        never approved (`make()` builds it when no gate was held, e.g. library use)."""
        pending, self._pending = self._pending, None
        gate = pending[1] if pending and pending[0] == subject else make()
        if gate.refusal:
            raise ToolRefusedError(gate.refusal)
        if not gate.ask:
            return gate
        if not gate.approved and self.ask is not None:
            gate.approved = bool(self.ask(gate))
        if not gate.approved:
            raise ToolRefusedError(f"{gate.tool}: not run: it needs the user's approval (through the agent, or "
                                   "an `ask` callback for library use) or an allow rule")
        return gate
