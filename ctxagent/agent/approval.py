"""Approval of tool calls that change things (apply_patch, commands, python_exec).

`ApprovalPolicy` asks `ask` (a callable: question -> one line, None refuses) about a
preview; `decide_gate` decides commands and python_exec from their `exec.gate.Gate`.
Answers and the `--yes` / `allow_exec` rules: docs/architecture.md ("The loop in detail").
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Callable

from ctxagent.exec.gate import Gate

#: The question shown under the preview.
QUESTION = "Apply? [y]es / [n]o (+ optional reason) / [a]ll for this session: "
#: The question under a command or code (`{what}`: what "always" covers).
GATE_QUESTION = "Run? [y]es / [n]o (+ optional reason) / [a]lways {what} this session: "
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


def not_an_answer(line: str) -> str:
    """The line shown before the question again after `line` did not parse: what was read and
    the valid answers (one line, newline-terminated)."""
    shown = " ".join(line.split())[:40]
    what = f"{shown!r} is not an answer" if shown else "an empty line is not an answer"
    return f"{what}: type y (yes), n (no; words after it go to the model as your reason) or a (all / always).\n"


class ApprovalPolicy:
    """Decides whether a call that needs approval may run. `auto_approve`: approve everything
    without asking (--yes, config). `ask(question)`: the user's answer line, or None (no answer
    can be had: no). With neither, every call is refused with a hint to use --yes.
    `question_lock`: shared by agents running at once, so a preview and its question show together.
    """

    def __init__(self, *, auto_approve: bool = False, ask: Callable[[str], str | None] | None = None,
                 allow_exec: bool = False, question_lock: AbstractContextManager | None = None) -> None:
        self.asking = question_lock or nullcontext()
        """Held from a call's preview to its answer (a context manager)."""
        self.approve_all = auto_approve
        self.allow_exec = allow_exec
        self._ask = ask
        #: "always" answers of this session: gate key -> the tool it was given for.
        self.grants: dict[str, str] = {}

    @property
    def pre_approved(self) -> bool:
        """True when calls are approved without asking (--yes, or `all` was answered)."""
        return self.approve_all

    def decide(self, tool_name: str, preview: str, *, force_ask: bool = False) -> Decision:
        """Ask (unless pre-approved; `force_ask`: a hook wants the question asked anyway) and return
        the decision. KeyboardInterrupt passes through."""
        if self.approve_all and not force_ask:
            return Decision(approved=True)
        if self._ask is None:
            return Decision(approved=False, reason="no way to ask the user for approval (run with --yes to allow changes)")
        decision = self._answer(QUESTION, "no answer (input closed)")
        if decision.all and not force_ask:
            self.approve_all = True
        return decision

    def _answer(self, question: str, closed: str) -> Decision:
        """Ask until an answer parses (MAX_BAD_ANSWERS tries); an unreadable one is named with
        the valid answers before the question is asked again. `closed`: the reason when input ends."""
        asked = question
        for _ in range(MAX_BAD_ANSWERS):
            line = self._ask(asked) if self._ask is not None else None
            if line is None:
                return Decision(approved=False, reason=closed)
            decision = parse_answer(line)
            if decision is not None:
                return decision
            asked = not_an_answer(line) + question
        return Decision(approved=False, reason=f"no valid answer after {MAX_BAD_ANSWERS} tries")


    def gate_pre_approved(self, gate: Gate) -> str:
        """Why `gate` runs without asking ("rule `pytest *`", "--allow-exec", "always for
        `pytest` this session"), or "" when the user must be asked."""
        if not gate.ask:
            return f"allowed by the rule `{gate.rule}`"
        if self.allow_exec:
            return "--allow-exec / approval = \"never\""
        if gate.key is not None and gate.key in self.grants:
            return f"always for `{gate.key}` this session (/permissions)"
        return ""

    def decide_gate(self, gate: Gate, *, force_ask: bool = False) -> Decision:
        """Decide a command or python_exec call (refusals in `gate.refusal` are the caller's;
        `force_ask`: ask even when a rule or grant would allow). KeyboardInterrupt passes through."""
        if not force_ask and self.gate_pre_approved(gate):
            return Decision(approved=True)
        if self._ask is None:
            return Decision(approved=False, reason=_NO_ASK)
        what = f"`{gate.key}`" if gate.key else "(this once: no session-wide approval covers this line)"
        decision = self._answer(GATE_QUESTION.format(what=what), f"no answer (input closed); {_NO_ASK}")
        if decision.all and gate.key is not None:
            self.grants[gate.key] = gate.tool
        return decision

    def revoke(self, key: str) -> bool:
        """Forget the "always" grant `key`; False when there was none."""
        return self.grants.pop(key, None) is not None


_NO_ASK = ("--yes approves patches only: commands and code need an answer, or --allow-exec "
           "(approval = \"never\") for a headless run")
