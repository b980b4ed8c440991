"""`Hooks`: the rules of one session, fired by event. Matching rules run one after another
(deterministic order: the user's files first, then the repository's), each bounded by its
timeout; their verdicts combine into one `HookResult` (`decision.combine`)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ctxagent.harness.hooks.config import HookRule
from ctxagent.harness.hooks.decision import HookResult, combine, read_run
from ctxagent.harness.hooks.run import hook_environment, run_hook


@dataclass(frozen=True)
class CompactVerdict:
    """What the PreCompact hooks said: `notices` to show the user; `blocked`: why a hook stopped
    this compaction (exit 2 or `"decision": "block"`, as Claude Code reads them), else None."""

    notices: list[str] = field(default_factory=list)
    blocked: str | None = None


class Hooks:
    """Fires `rules` for one session: `repo` (cwd of every hook), `session_id`, `transcript_path`,
    `secrets` (hidden from the hooks' environment, redacted from their output). `extra`: added
    to every payload (a sub-agent's `agent_id`, `agent_type`: `for_subagent`)."""

    def __init__(self, rules: Iterable[HookRule], *, repo: Path, session_id: str, transcript_path: str,
                 secrets: Iterable[str] = (), env: Mapping[str, str] | None = None) -> None:
        self.rules = list(rules)
        self.repo = Path(repo)
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.secrets = [s for s in secrets if s]
        self.env = hook_environment(self.repo, self.secrets, env)
        self.extra: dict[str, str] = {}

    def for_subagent(self, agent_id: str, agent_type: str, transcript_path: str) -> Hooks:
        """These rules for the events of sub-agent `agent_id` (its definition's name `agent_type`,
        its transcript `transcript_path`): the same session, every payload saying whose event it is
        (Claude Code's `agent_id`, `agent_type`; ctxagent's `agent_transcript_path`)."""
        child = copy.copy(self)
        child.extra = {"agent_id": agent_id, "agent_type": agent_type, "agent_transcript_path": transcript_path}
        return child

    def has(self, event: str) -> bool:
        """True when at least one rule listens to `event`."""
        return any(rule.event == event for rule in self.rules)

    def fire(self, event: str, subject: str | None = None, **fields: Any) -> HookResult:
        """Run the rules of `event` matching `subject` with the payload (common fields + `fields`);
        their combined verdict (empty when none matched). SubagentStop's subject is the agent type
        (Claude Code's matcher). KeyboardInterrupt passes."""
        if event == "SubagentStop" and subject is None:
            subject = self.extra.get("agent_type")
        matching = [rule for rule in self.rules if rule.event == event and rule.matches(subject)]
        if not matching:
            return HookResult()
        payload = {"session_id": self.session_id, "transcript_path": self.transcript_path, "cwd": str(self.repo),
                   "hook_event_name": event, **self.extra, **fields}
        results = [read_run(rule, run_hook(rule.command, payload, repo=self.repo, env=self.env,
                                           timeout_s=rule.timeout_s, secrets=self.secrets))
                   for rule in matching]
        return combine(results)

    def pre_compact(self, trigger: str, focus: str = "") -> CompactVerdict:
        """Fire PreCompact (`trigger`: "manual" or "auto"; `focus`: `/compact`'s instructions).
        A block stops this compaction (Claude Code >= 2.1.105); what follows: docs/hooks.md."""
        result = self.fire("PreCompact", trigger, trigger=trigger, custom_instructions=focus)
        said = [result.warning] if result.warning else []
        if not result.blocked:
            return CompactVerdict(said)
        reason = result.reason or "(no reason given)"
        return CompactVerdict([*said, f"a PreCompact hook blocked the compaction: {reason}"], blocked=reason)


NO_HOOKS = Hooks((), repo=Path("."), session_id="", transcript_path="", env={})
"""A session without hooks (the library default)."""
