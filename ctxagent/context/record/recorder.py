"""`SnapshotRecorder`: numbers and writes the snapshots of one session's model calls.

The assembler is given one at construction and hands it each main request; the summary
calls of compaction and the model calls of tools (`record_side_call`) go through it too.
Reference: docs/compaction.md ("The snapshot recorder").
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable, Iterable

from ctxagent.context.compaction.model_summary import takes_tools
from ctxagent.context.record.objects import flush_all
from ctxagent.context.record.snapshot import highest_call, write_call_snapshot, write_side_call_snapshot
from ctxagent.errors import StorageError
from ctxagent.storage.files import state_dir
from ctxagent.text.tokens import TokenCounter

#: `notice(text)`: tells the user something went wrong on the side (a snapshot not written).
Notice = Callable[[str], None]


class SnapshotRecorder:
    """Snapshots of one session: `model` (name sent), `secrets` (scrubbed), `enabled`
    (False: nothing is written, calls are still numbered), `request_params() -> dict`
    (the client's body beside model/messages/tools), `session` ({"session_id", "repo"}:
    where summary calls go before the first main call). Raises StorageError on writes.
    """

    def __init__(self, model: str | None = None, *, counter: TokenCounter | None = None, enabled: bool = True,
                 secrets: Iterable[str] = (), request_params: Callable[[], dict] | None = None,
                 session: dict | None = None) -> None:
        self.model = model
        self.counter = counter or TokenCounter(model)
        self.enabled = enabled
        self.secrets = list(secrets)
        self.request_params = request_params
        self.session = dict(session) if session else None
        self.calls = 0  # the number of the last call numbered
        self.pending: list[dict] = []  # compaction-summary calls not yet in a snapshot
        self._numbered: Any = None  # the session whose snapshots on disk `calls` has caught up with
        self._last_state: dict | None = None  # the state of the last main call (its session, turn, step)
        self._last_main: int | None = None  # that call's number
        self._open_summary: dict | None = None  # the summary call under way, for `summary_reply`

    def fork(self) -> SnapshotRecorder:
        """A copy for a preview: numbers as this one would, without changing it; nothing pending."""
        twin = copy.copy(self)
        twin.pending, twin._open_summary = [], None
        return twin

    # -- main calls ----------------------------------------------------------------

    def number(self, state: dict) -> int:
        """The next call's number: the highest of `calls + 1`, the session's highest snapshot
        on disk + 1 (read once per session, so a resumed one numbers on) and `call_index`."""
        session, repo = state.get("session_id"), state.get("repo")
        if self.enabled and session and repo and session != self._numbered:
            self.calls = max(self.calls, highest_call(state_dir(Path(repo)), str(session)))
            self._numbered = session
        return max(int(state.get("call_index") or 0), self.calls + 1)

    def write_call(self, state: dict, call: int, messages: list[dict], tools: list[dict] | None,
                   report: dict) -> None:
        """Write main call `call`'s snapshot with the summary calls pending; a taken number
        gives the next free one, which `calls` then carries."""
        self.calls = call
        summaries, self.pending = self.pending, []
        if self.enabled:
            request = {"model": self.model, "messages": messages, "tools": tools or [], **self._params()}
            path = write_call_snapshot(state, call, request, report, secrets=self.secrets, summary_calls=summaries)
            if path is not None:
                self.calls = int(path.stem)
        self._last_state, self._last_main = state, self.calls

    def flush(self) -> None:
        """fsync the snapshots written and not yet synced (the batch rule: docs/context.md)."""
        flush_all()

    def _params(self) -> dict:
        return self.request_params() if self.request_params is not None else {}

    # -- side calls ----------------------------------------------------------------

    def record_side_call(self, kind: str, messages: list[dict], tools: list[dict] | None = None, *,
                         usage: dict | None = None, error: str | None = None,
                         made_for: dict | None = None) -> Path | None:
        """Write a tool's model call (`kind`: the tool) under the next number, naming the last
        main call (`made_for` adds tool_call_id, attempt). None when disabled or no main call
        was made yet. Raises StorageError if it cannot be written."""
        state = self._last_state
        if not self.enabled or state is None:
            return None
        request = {"model": self.model, "messages": messages, **({"tools": tools} if tools else {}), **self._params()}
        details: dict[str, Any] = {
            "made_for": {"call": self._last_main, "turn": state.get("turn"), "step": state.get("step"),
                         **(made_for or {})},
            "tokens": self.counter.count_messages(messages, tools or None), "usage": usage}
        if error:
            details["error"] = error
        return self._write_side(state, kind, request, details)

    def _write_side(self, state: dict, kind: str, request: dict, details: dict) -> Path | None:
        path = write_side_call_snapshot(state, self.number(state), kind, request, details, secrets=self.secrets)
        if path is not None:
            self.calls = int(path.stem)
        return path

    # -- compaction summary calls ----------------------------------------------------

    def summary_reply(self, messages: list, tools: list | None, response: Any, error: Exception | None) -> None:
        """A `RecordedClient` recorder for the summarizer's client: the server's usage goes
        in the record of the summary call under way."""
        usage = getattr(response, "usage", None)
        if self._open_summary is not None and hasattr(usage, "to_dict"):
            self._open_summary["usage"] = usage.to_dict()

    def recorded(self, summarize: Callable[[list[dict]], str] | None, trigger: str, *, notice: Notice,
                 own_snapshot: bool = False, focus: str | None = None) -> Callable[[list[dict]], str] | None:
        """`summarize` with each call recorded: pending for the request being built, or
        (`own_snapshot`, an on-demand compaction) written on its own when it ends."""
        if summarize is None or not self.enabled:
            return summarize

        def recorded(messages: list[dict], tools: list[dict] | None = None) -> str:
            entry = {"trigger": trigger, "tokens": self.counter.count_messages(messages, tools),
                     "request": {"model": self.model, "messages": messages, **self._params(),
                                 **({"tools": tools, "tool_choice": "none"} if tools else {})}}
            if not own_snapshot:
                self.pending.append(entry)
            self._open_summary = entry
            try:
                return summarize(messages, tools=tools) if tools else summarize(messages)
            except Exception as exc:
                entry["error"] = f"{type(exc).__name__}: {exc}"
                raise
            finally:
                self._open_summary = None
                extra = {"focus": focus} if focus else {}
                if own_snapshot and not self._write_summary_call(entry, None, notice, **extra):
                    self.pending.append(entry)

        recorded.takes_tools = takes_tools(summarize)  # type: ignore[attr-defined]
        return recorded

    def write_pending(self, state: dict, *, unsent: str, notice: Notice) -> None:
        """Write the pending summary calls of a request that was not built (`unsent`: why),
        each as a snapshot of its own; those that cannot be written stay pending."""
        pending, self.pending = self.pending, []
        for entry in pending:
            extra = {"unsent": unsent} if entry.get("trigger") == "auto" else {}  # else: kept from an on-demand one
            if not self._write_summary_call(entry, state, notice, **extra):
                self.pending.append(entry)

    def _write_summary_call(self, entry: dict, state: dict | None, notice: Notice, **made_for: Any) -> bool:
        """Write summary call `entry` as a snapshot of kind "summary", made for the last main
        call (`state`: the call being built instead). False when it cannot be written here."""
        state = state if state and state.get("session_id") else (self._last_state or self.session)
        if not self.enabled or not state or not state.get("session_id") or not state.get("repo"):
            return False
        details: dict[str, Any] = {
            "made_for": {"call": self._last_main, "turn": state.get("turn"), "step": state.get("step"),
                         "trigger": entry.get("trigger"), **made_for},
            "tokens": entry.get("tokens"), "usage": entry.get("usage")}
        if entry.get("error"):
            details["error"] = entry["error"]
        try:
            return self._write_side(state, "summary", entry["request"], details) is not None
        except StorageError as exc:
            notice(f"the compaction summary call's snapshot could not be written ({exc}); "
                   "it goes with the next model call's snapshot")
            return False
