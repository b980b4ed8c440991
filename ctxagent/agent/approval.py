"""Approval of tool calls that change things (apply_patch, python_exec).

The loop shows the user a preview (a plain diff or the code) and asks an
`ApprovalPolicy`. Answers (case-insensitive): `y`/`yes`; `n`/`no`, optionally followed
by a reason (`n use a dataclass instead`, `no: wrong file`) that is sent to the model as
the tool result; `a`/`all` (yes now and for the rest of the session). `--yes` and the
config setting `agent.auto_approve = true` pre-approve everything.

Where the answer comes from is the caller's business: `ask` is any callable that takes
a question and returns one line (a prompt_toolkit prompt in `chat`, a line of stdin in
`run`). `ask` returning None (no input left: stdin closed) refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

#: The question shown under the preview.
QUESTION = "Apply? [y]es / [n]o (+ optional reason) / [a]ll for this session: "
#: How many unreadable answers are tolerated before refusing.
MAX_BAD_ANSWERS = 3


@dataclass(frozen=True)
class Decision:
    """An approval answer. `reason`: the user's words on refusal (may be empty)."""

    approved: bool
    reason: str = ""
    all: bool = False


def parse_answer(text: str) -> Decision | None:
    """Read one answer line; None when it is not a valid answer (ask again)."""
    stripped = text.strip()
    word, _, rest = stripped.partition(" ")
    word = word.lower().rstrip(":,.")
    if word in ("y", "yes"):
        return Decision(approved=True)
    if word in ("a", "all"):
        return Decision(approved=True, all=True)
    if word in ("n", "no"):
        return Decision(approved=False, reason=rest.strip().lstrip(":,-").strip())
    lowered = stripped.lower()
    for prefix in ("no:", "n:", "no,", "n,"):
        if lowered.startswith(prefix):
            return Decision(approved=False, reason=stripped[len(prefix):].strip())
    return None


class ApprovalPolicy:
    """Decides whether a call that needs approval may run.

    `auto_approve`: approve everything without asking (--yes, config). `ask(question)`:
    returns the user's answer line, or None when no answer can be had (treated as no).
    With neither, every call is refused with a hint to use --yes.
    """

    def __init__(self, *, auto_approve: bool = False, ask: Callable[[str], str | None] | None = None) -> None:
        self.approve_all = auto_approve
        self._ask = ask

    @property
    def pre_approved(self) -> bool:
        """True when calls are approved without asking (--yes, or `all` was answered)."""
        return self.approve_all

    def decide(self, tool_name: str, preview: str) -> Decision:
        """Ask (unless pre-approved) and return the decision. KeyboardInterrupt passes through."""
        if self.approve_all:
            return Decision(approved=True)
        if self._ask is None:
            return Decision(approved=False, reason="no way to ask the user for approval (run with --yes to allow changes)")
        for _ in range(MAX_BAD_ANSWERS):
            line = self._ask(QUESTION)
            if line is None:
                return Decision(approved=False, reason="no answer (input closed)")
            decision = parse_answer(line)
            if decision is not None:
                if decision.all:
                    self.approve_all = True
                return decision
        return Decision(approved=False, reason="no valid answer")

