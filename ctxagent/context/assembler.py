"""`ContextAssembler`: the context engine's side of the loop seam.

Before every model call the loop calls `assemble(history, tools, state)`. The request is
built from: the system messages at the head of `history`; the conversation, seen through
the compaction done so far in this session; and the session state, re-read every call
so it comes back after any compaction, and selected for this request
(`ctxagent.context.state.select`): the todo board as the state layer, the notes as
evidence packets and the memory hits as memory packets (memories of other sessions only:
`own_memory`), each note and memory scored by
relevance to the current request and the task and by recency, and chosen under its
layer's budget. They are sent in front of the current request (`fitting.build_request`),
so the system prompt and the earlier history stay byte-identical between calls. Then:

- every tool result is capped to `tool_result_ratio` of the input budget (case C05);
- above `trigger_ratio` of the context window, and at most once per turn, the
  conversation is compacted (`ctxagent.context.compaction.compactor`); the compacted view is
  kept here, so the loop's history stays the full record;
- `ctxagent.context.fitting` makes the request fit the input budget
  (`context_window - max_output_tokens`) or raises `ContextOverflowError`;
- a snapshot of the exact request (with the client's parameters, `request_params`) and
  its report is written, one per model call, numbered after the session's existing
  snapshots (a resumed session numbers on); the summary call of an automatic compaction
  made for this request goes in it too, as `summary_calls` (`ctxagent.context.record.snapshot`).

With a text protocol (`protocol`, set by the loop: an object with `name`, `native` and
`encode(messages, tools)`), the snapshot holds the request as that protocol sends it (the
history as text, no `tools`) and its report says `"protocol"`; everything before (budget,
compaction, fitting) works on the native-form history, whatever the protocol.

`record_side_call(kind, messages, ...)` writes the snapshot of a model call a tool made
(the `plan` tool), under the next number, naming the main call it was made for
(`ctxagent.agent.wiring.attach` connects the plan tool to it).

`compact(history, focus=None)` compacts on demand (after a context-length error from
the server, or `/compact` in chat) and returns the new history for the loop to keep.
Its summary call is written when it ends as a snapshot of its own (`"kind": "summary"`,
made for the last main call: the one the server refused, or the one before `/compact`),
since no later call may come. So is the summary call of an automatic compaction whose
request then could not be built (`ContextOverflowError`). `summary_reply` is the
recorder (`ctxagent.llm.meter.RecordedClient`) that adds the server's usage to them.

An automatic compaction is also handed to `on_view` as data (`CompactedView.to_record`:
the summary, which messages it stands for, a digest of them), which the session writes
to its transcript. `resume_from(record)` gives a resumed session's last such record: the
first call rebuilds that view without a summary call when the history still starts with
the messages it covers; otherwise `on_notice` says why not and the history is taken as
it is (compacted anew once it passes the threshold).
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from ctxagent.context.compaction.compactor import Budget, CompactionConfig, CompactionRecord, compact_conversation
from ctxagent.context.compaction.sections import summary_message
from ctxagent.context.compaction.view import CompactedView
from ctxagent.context.fitting import build_request, fit_request
from ctxagent.context.messages import repair_pairing, truncate_tool_result
from ctxagent.context.packet import ContextConfig
from ctxagent.context.record.report import build_report, message_preview
from ctxagent.context.record.snapshot import highest_call, write_call_snapshot, write_side_call_snapshot
from ctxagent.context.request import AssembledRequest
from ctxagent.context.state.read import gather_state
from ctxagent.context.state.select import StateSelection, scoring_query, select_state, selection_config
from ctxagent.errors import StorageError
from ctxagent.redaction import redact
from ctxagent.storage.files import state_dir
from ctxagent.text.tokens import TokenCounter

#: Each context-length error from the server shrinks the budget we count against by this factor.
OVERFLOW_SHRINK = 0.9
_MIN_SAFETY = 0.5


class ContextAssembler:
    """Builds every request of a session under the token budget; see the module doc.

    `model`: a `ModelSettings` (context_window, max_output_tokens, model name for the
    tokenizer); `context`: `Settings.context` (keys `compaction_*`, see CompactionConfig);
    `summarize`: `summarize(messages) -> str`, the model call for LLM summaries
    (`ctxagent.context.compaction.model_summary.llm_summarizer(client)`), None for extractive only;
    `counter`: a TokenCounter (default: one for the model); `snapshots`: write snapshot
    files; `load_state`: reads the todo board and notes of `state["repo"]` (None: only
    what `state` carries); `memory_search(query) -> list`: memory hits for the memory
    layer; `on_compaction(record)`: called after each automatic compaction (to write it
    to the session transcript); `secrets`: strings scrubbed from snapshots (API keys);
    `select_config`: the ContextConfig whose min_relevance, weights, half-life, layer
    shares and dedup threshold select notes and memories (default: from `context`, see
    `stateselect.selection_config`); `clock`: Unix seconds, for recency;
    `request_params() -> dict`: what the model client sends beside model, messages and
    tools, for the snapshots (`request_params_of(client)`; None: not recorded);
    `on_view(record)`: called after each automatic compaction with the compacted view as
    JSON-ready data, for a resumed session to rebuild (`resume_from`); `on_notice(text)`:
    told when a resumed session's record could not be used.

    `calls` is the number of the last call this assembler numbered. A call's number is
    the highest of: `calls + 1`, the session's highest snapshot on disk + 1 (read once
    per session, so a resumed session numbers on) and the loop's `call_index`.
    """

    def __init__(self, model: Any, *, context: Any = None, summarize: Callable[[list[dict]], str] | None = None,
                 counter: TokenCounter | None = None, config: CompactionConfig | None = None, snapshots: bool = True,
                 load_state: Callable[..., tuple[dict, list[str]]] | None = gather_state,
                 memory_search: Callable[[str], list] | None = None,
                 on_compaction: Callable[[CompactionRecord], None] | None = None,
                 secrets: Iterable[str] = (), select_config: ContextConfig | None = None,
                 clock: Callable[[], float] = time.time,
                 request_params: Callable[[], dict] | None = None,
                 on_view: Callable[[dict], None] | None = None,
                 on_notice: Callable[[str], None] | None = None) -> None:
        self.model = model
        self.secrets = list(secrets)
        self.config = config or CompactionConfig.from_settings(context)
        self.summarize = summarize
        self.counter = counter or TokenCounter(getattr(model, "model", None))
        self.snapshots = snapshots
        self.load_state = load_state
        self.memory_search = memory_search
        self.on_compaction = on_compaction
        self.select_config = select_config or selection_config(context)
        self.clock = clock
        self.request_params = request_params
        self.on_view, self.on_notice = on_view, on_notice
        self._resumed: Any = None  # a resumed session's view record, taken at the first call
        self._notices: list[str] = []  # said since the last request returned them (`take_notices`)
        self.view = CompactedView()
        self.records: list[CompactionRecord] = []
        self.compacted_turns: set[Any] = set()
        self.safety = 1.0
        self.calls = 0
        self._numbered: Any = None  # the session whose snapshots on disk `calls` has caught up with
        self._summary_calls: list[dict] = []  # compaction-summary calls not yet in a snapshot
        self._last_state: dict | None = None  # the state of the last main call (its session, turn, step)
        self._last_main: int | None = None  # that call's number
        self._open_summary: dict | None = None  # the summary call under way, for `summary_reply`
        self.session_state: dict | None = None  # {"session_id", "repo"}: where side calls go before a main call
        self._last_selection = StateSelection()
        self._last_tools: list[dict] = []
        self.protocol: Any = None  # the loop's protocol: snapshots hold the request as it encodes it

    # -- budget ----------------------------------------------------------------

    def budget(self, state: dict | None = None) -> dict[str, int]:
        """Token figures: context_window, max_output_tokens, limit (input budget after the
        safety factor), trigger (compaction threshold) and target (after compaction)."""
        state = state or {}
        window = int(state.get("context_window") or self.model.context_window)
        output = int(state.get("max_output_tokens") or self.model.max_output_tokens)
        limit = max(1, int((window - output) * self.safety))
        trigger = min(int(self.config.trigger_ratio * window), limit)
        target = min(trigger, int(self.config.target_ratio * limit))
        return {"context_window": window, "max_output_tokens": output, "limit": limit,
                "trigger": trigger, "target": target}

    # -- the seam ----------------------------------------------------------------

    def assemble(self, history: list[dict], tools: list[dict], state: dict) -> AssembledRequest:
        """The request for this model call (system first, pairing valid, within budget).

        Raises ContextOverflowError when the irreducible part cannot fit; a summary call
        made for it is then written as a snapshot of its own.
        """
        try:
            return self._assemble(history, tools, state, dry_run=False)
        except Exception as exc:
            self._write_pending_summaries(dict(state or {}), unsent=f"{type(exc).__name__}: {exc}")
            raise

    def preview(self, history: list[dict], tools: list[dict] | None, state: dict) -> AssembledRequest:
        """What `assemble` would send next, without a model call, a snapshot or any change of state.

        When that call would compact and ask the model for the summary, the preview does not
        ask: the deterministic extractive summary stands in for it (as when a summary call
        fails), and the report says so. Its "compaction" then has "stand_in": the tokens
        of the summary request the next call will send and a `note` saying all this; the
        summary row of "packets" says "stand-in" in its reason. The next `assemble` is unchanged
        (the same compaction, with the model's summary)."""
        twin = copy.copy(self)
        twin.view, twin.records = self.view.copy(), list(self.records)
        twin.compacted_turns = set(self.compacted_turns)
        twin._summary_calls = []  # a preview's records belong to no snapshot
        asked: list[list[dict]] = []
        if self.summarize is not None:
            def stand_in(messages: list[dict]) -> str:  # the summary call, not made
                asked.append(messages)
                raise _NoModelCall("a preview makes no model call")

            twin.summarize = stand_in
        result = twin._assemble(history, tools or [], state, dry_run=True)
        compaction = result.report.get("compaction")
        if asked and compaction is not None and compaction.get("method") == "extractive":
            _mark_stand_in(result.report, compaction, self.counter.count_messages(asked[-1]))
        return result

    def compact(self, history: list[dict], focus: str | None = None, *, trigger: str = "overflow") -> list[dict]:
        """Compact now; return the new history (system messages first) for the loop to keep.

        `trigger`: "overflow" (the default: the server said the context is too long, so
        the budget we count against also shrinks by OVERFLOW_SHRINK) or "manual"
        (`/compact`). The record is in `last_record`; `on_compaction` is not called (the
        caller records this compaction itself, as the loop does after a context-length error).
        """
        if trigger == "overflow":
            self.safety = max(_MIN_SAFETY, self.safety * OVERFLOW_SHRINK)
        system, convo = _split_system(history)
        self._take_resumed(convo, report=True)
        view, origins = self.view.apply(convo)
        new, record, _ = self._compact(system, view, origins, self._last_tools, self._last_selection,
                                       trigger=trigger, focus=focus, force=True, own_snapshot=True)
        self.view.adopt(new)
        return [*system, *new]

    @property
    def last_record(self) -> CompactionRecord | None:
        """The most recent compaction of this session, or None."""
        return self.records[-1] if self.records else None

    def resume_from(self, record: dict | None) -> None:
        """Go on from a resumed session's last automatic compaction: `record` is what
        `on_view` was given then (as read back from the transcript), `{"missing": why}`
        when the transcript shows the compaction but not its view, or None. Used at the next
        `assemble`/`compact`, against the history it is given."""
        self._resumed = record

    def _take_resumed(self, convo: list[dict], *, report: bool) -> None:
        """Install the view `resume_from` gave, if it still fits `convo`; else say why not."""
        record, self._resumed = self._resumed, None
        if record is None:
            return
        if isinstance(record, dict) and "missing" in record:
            reason = str(record["missing"])
        else:
            reason = self.view.restore(record, convo, self._normalize)
            if reason is None:
                self.compacted_turns.add(record.get("turn"))  # at most one compaction per turn, resumed or not
                return
        if report:
            self._notice(f"resumed session: its last automatic compaction cannot be reused ({reason}); the "
                         "history is taken whole and compacted anew once a request passes the threshold")

    def _notice(self, text: str) -> None:
        """Keep `text` for the next request's `notices` (and hand it to `on_notice`, if given)."""
        self._notices.append(text)
        if self.on_notice is not None:
            self.on_notice(text)

    def take_notices(self) -> list[str]:
        """The notices said since the last request (or the last call of this), oldest first;
        the loop calls it after `compact`, whose notices no request carries."""
        notices, self._notices = self._notices, []
        return notices

    def _normalize(self, message: Any) -> Any:
        """A message as the transcript holds it (redacted), for the view's digest."""
        return redact(message, self.secrets)

    def _view_record(self, convo: list[dict], record: CompactionRecord) -> dict:
        return {"turn": record.turn_id, "method": record.method, **self.view.to_record(convo, self._normalize)}

    # -- internals ---------------------------------------------------------------

    def _assemble(self, history: list[dict], tools: list[dict], state: dict, *, dry_run: bool) -> AssembledRequest:
        state = dict(state or {})
        budget = self.budget(state)
        system, convo = _split_system(history)
        self._take_resumed(convo, report=not dry_run)
        query = scoring_query(state, convo)
        full_state, problems = self._gather(state, query)
        selection = select_state(full_state, query, limit=budget["limit"], counter=self.counter,
                                 config=self.select_config, now=self.clock())
        self._last_selection, self._last_tools = selection, list(tools or [])
        view, origins = self.view.apply(convo)
        view, capped = self._cap_results(view, budget["limit"])
        cut = {origins[i] for i in capped if origins[i] is not None}
        parts = selection.parts
        tokens = self.counter.count_messages(build_request(system, parts, view), tools)
        record = None
        turn = state.get("turn_id", state.get("turn", sum(1 for m in convo if m.get("role") == "user")))
        if tokens > budget["trigger"] and turn not in self.compacted_turns:
            view, record, origins = self._compact(system, view, origins, tools, selection, trigger="auto", turn=turn)
            self.view.install(convo, view, origins)
        fit = fit_request(system, parts, view, tools=tools, counter=self.counter, limit=budget["limit"],
                          keep_tool_results=self.config.keep_tool_results)
        messages = repair_pairing(fit.messages)
        call = self._call_number(state)
        report = build_report(call=call, state=state, budget=budget, system=system, selection=selection, fit=fit,
                              tools=tools, counter=self.counter, origins=origins, convo=convo, cut=cut,
                              record=record, problems=problems, n_system=len(system))
        request = AssembledRequest(messages=messages, report=report, compaction=record)
        if not dry_run:
            self.calls = call
            self._write_snapshot(state, call, messages, tools, report)
            self._last_state, self._last_main = state, self.calls
            request.view = self._view_record(convo, record) if record is not None else None
            request.notices = self.take_notices()
            if record is not None and self.on_compaction is not None:
                self.on_compaction(record)
            if request.view is not None and self.on_view is not None:  # after its event: resume rebuilds this view
                self.on_view(request.view)
        return request

    def _call_number(self, state: dict) -> int:
        """This call's number (see the class doc): the first time a session is seen, its
        snapshots on disk count, so a resumed session numbers on after them."""
        session, repo = state.get("session_id"), state.get("repo")
        if self.snapshots and session and repo and session != self._numbered:
            self.calls = max(self.calls, highest_call(state_dir(Path(repo)), str(session)))
            self._numbered = session
        return max(int(state.get("call_index") or 0), self.calls + 1)

    def _write_snapshot(self, state: dict, call: int, messages: list[dict], tools: list[dict] | None,
                        report: dict) -> None:
        """Write this call's snapshot, with the summary calls made since the last one; a
        taken number gives the next free one, which `calls` and the report then carry."""
        summaries, self._summary_calls = self._summary_calls, []
        if not self.snapshots:
            return
        params = self.request_params() if self.request_params is not None else {}
        if self.protocol is not None and not getattr(self.protocol, "native", True):
            messages, _ = self.protocol.encode(messages, tools or [])
            tools, report["protocol"] = None, self.protocol.name
        request = {"model": getattr(self.model, "model", None), "messages": messages, "tools": tools or [], **params}
        path = write_call_snapshot(state, call, request, report, secrets=self.secrets, summary_calls=summaries)
        if path is not None:
            self.calls = int(path.stem)

    def record_side_call(self, kind: str, messages: list[dict], tools: list[dict] | None = None, *,
                         usage: dict | None = None, error: str | None = None,
                         made_for: dict | None = None) -> Path | None:
        """Write the snapshot of a model call a tool made (`kind`: the tool, e.g. "plan")
        while running the tool calls of the last main call's reply: its request as sent
        (`messages`, `tools` if any, the client's parameters), `usage` (a `Usage.to_dict()`,
        None when it failed), `error`, and `made_for` (the main call's number, turn and
        step, plus what the caller adds: tool_call_id, attempt). It takes the next number,
        so the next main call numbers after it. Returns the path; None when snapshots are
        off or no main call was made yet. Raises StorageError if it cannot be written."""
        state = self._last_state
        if not self.snapshots or state is None:
            return None
        params = self.request_params() if self.request_params is not None else {}
        request = {"model": getattr(self.model, "model", None), "messages": messages,
                   **({"tools": tools} if tools else {}), **params}
        details: dict[str, Any] = {
            "made_for": {"call": self._last_main, "turn": state.get("turn"), "step": state.get("step"),
                         **(made_for or {})},
            "tokens": self.counter.count_messages(messages, tools or None), "usage": usage}
        if error:
            details["error"] = error
        return self._write_side(state, kind, request, details)

    def _write_side(self, state: dict, kind: str, request: dict, details: dict) -> Path | None:
        """Write a side call's snapshot under the next number (which `calls` then carries)."""
        path = write_side_call_snapshot(state, self._call_number(state), kind, request, details, secrets=self.secrets)
        if path is not None:
            self.calls = int(path.stem)
        return path

    def summary_reply(self, messages: list, tools: list | None, response: Any, error: Exception | None) -> None:
        """A `RecordedClient` recorder for the summarizer's client: the usage the server
        reported for the summary call under way goes in its record (and snapshot)."""
        usage = getattr(response, "usage", None)
        if self._open_summary is not None and hasattr(usage, "to_dict"):
            self._open_summary["usage"] = usage.to_dict()

    def _write_summary_call(self, entry: dict, state: dict | None = None, **made_for: Any) -> bool:
        """Write summary call `entry` (`_recorded`'s record) as a snapshot of its own, kind
        "summary", made for the last main call (`state`: the call being built instead, for
        an automatic compaction whose request failed). False when it cannot be written
        here (snapshots off, no session known yet, a StorageError: said through
        `on_notice`); the caller then keeps it for the next main call's snapshot."""
        state = state if state and state.get("session_id") else (self._last_state or self.session_state)
        if not self.snapshots or not state or not state.get("session_id") or not state.get("repo"):
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
            self._notice(f"the compaction summary call's snapshot could not be written ({exc}); "
                         "it goes with the next model call's snapshot")
            return False

    def _write_pending_summaries(self, state: dict, *, unsent: str) -> None:
        """The summary calls made for a request that was then not built (`unsent`: why),
        each as a snapshot of its own; those that cannot be written stay pending."""
        pending, self._summary_calls = self._summary_calls, []
        for entry in pending:
            extra = {"unsent": unsent} if entry.get("trigger") == "auto" else {}  # else: kept from an on-demand one
            if not self._write_summary_call(entry, state, **extra):
                self._summary_calls.append(entry)

    def _recorded(self, trigger: str, *, own_snapshot: bool = False,
                  focus: str | None = None) -> Callable[[list[dict]], str] | None:
        """`self.summarize`, with each call's request recorded: kept for the snapshot of
        the request being built (an automatic compaction), or, `own_snapshot` (an
        on-demand compaction), written as a snapshot of its own when the call ends."""
        summarize = self.summarize
        if summarize is None or not self.snapshots:
            return summarize

        def recorded(messages: list[dict]) -> str:
            params = self.request_params() if self.request_params is not None else {}
            entry = {"trigger": trigger, "tokens": self.counter.count_messages(messages),
                     "request": {"model": getattr(self.model, "model", None), "messages": messages, **params}}
            if not own_snapshot:
                self._summary_calls.append(entry)
            self._open_summary = entry
            try:
                return summarize(messages)
            except Exception as exc:
                entry["error"] = f"{type(exc).__name__}: {exc}"
                raise
            finally:
                self._open_summary = None
                if own_snapshot and not self._write_summary_call(entry, **({"focus": focus} if focus else {})):
                    self._summary_calls.append(entry)

        return recorded

    def _compact(self, system, view, origins, tools, selection: StateSelection, *, trigger, focus=None, force=False,
                 turn=None, own_snapshot=False):
        """Run compaction on `view`; returns (new view, record, origins of the new view)."""
        parts, state = selection.parts, selection.summary_state
        budget = self.budget(state)

        def measure(convo: list[dict]) -> int:
            return self.counter.count_messages(build_request(system, parts, convo), tools)

        new, record = compact_conversation(
            view, measure=measure, count_text=self.counter.count, budget=Budget(budget["target"], budget["limit"]),
            config=self.config, summarize=self._recorded(trigger, own_snapshot=own_snapshot, focus=focus), state=state, focus=focus, force=force, trigger=trigger)
        new_origins = [origins[i] if i is not None else None for i in record.kept]
        n_system = len(system)
        to_history = lambda idx: [origins[i] + n_system for i in idx if i is not None and origins[i] is not None]
        record.masked, record.dropped, record.kept = to_history(record.masked), to_history(record.dropped), [
            (o + n_system if o is not None else None) for o in new_origins]
        record.turn_id = turn if turn is not None else state.get("turn")
        self.compacted_turns.add(record.turn_id)
        self.records.append(record)
        return new, record, new_origins

    def _gather(self, state: dict, query: str) -> tuple[dict, list[str]]:
        """The session state: what `state` carries over the repository's todo board and notes
        (`load_state`), plus memory hits for `query` (`memory_search`), without the
        memories of this session (`own_memory`)."""
        loaded, problems = ({}, [])
        if self.load_state is not None and state.get("repo"):
            loaded, problems = self.load_state(state["repo"], state.get("task") or "")
        full = {**loaded, **state}
        if self.memory_search is not None and "memory" not in state and query:
            try:
                hits = list(self.memory_search(query))
                full["memory"] = [h for h in hits if not own_memory(h, state.get("session_id"))]
            except Exception as exc:  # a failing memory source is reported and skipped (issue 4)
                problems.append(f"memory search failed: {type(exc).__name__}: {exc}")
        return full, problems

    def _cap_results(self, view: list[dict], limit: int) -> tuple[list[dict], list[int]]:
        """Cut each tool result longer than `tool_result_ratio` of the input budget (case C05)."""
        cap_tokens = max(100, int(self.config.tool_result_ratio * limit))
        out, capped = list(view), []
        for i, message in enumerate(view):
            content = message.get("content")
            if message.get("role") != "tool" or not isinstance(content, str) or len(content) <= cap_tokens // 2:
                continue
            tokens = self.counter.count(content)
            if tokens > cap_tokens:
                chars = max(400, int(len(content) * cap_tokens / tokens * 0.95))
                out[i] = {**message, "content": truncate_tool_result(content, chars)}
                capped.append(i)
        return out, capped


class _NoModelCall(Exception):
    """Raised by a preview's stand-in summarizer: the compaction falls back to the extractive summary."""


#: What a preview says when it shows the extractive summary in place of the model's.
STAND_IN_NOTE = ("the summary shown is a stand-in: the next call compacts the history and asks the model for "
                 "the summary first (a summary request of {tokens} tokens); this preview made no model call and "
                 "shows the deterministic extractive summary instead, so the summary and the token counts may "
                 "differ")


def _mark_stand_in(report: dict, compaction: dict, tokens: int) -> None:
    """Mark a preview's compaction summary as the extractive stand-in for the model's."""
    note = STAND_IN_NOTE.format(tokens=tokens)
    compaction["summary_error"] = None
    compaction["stand_in"] = {"tokens": tokens, "note": note}
    shown = message_preview(summary_message(compaction.get("summary") or ""))
    for row in report.get("packets", []):
        if row.get("type") == "summary" and row.get("source") == "compaction" and row.get("preview") == shown:
            row["reason"] = "compaction summary: stand-in (extractive; the next call asks the model for it)"


def request_params_of(client: Any) -> Callable[[], dict]:
    """`() -> dict` for `ContextAssembler(request_params=...)`: the body `client` (an
    `LLMClient`) sends beside model, messages and tools (`max_tokens` or
    `max_completion_tokens`, `stream`, `stream_options`, `temperature`) and its
    `extra_body`; asked at every call, so a server that refused stream_options shows.
    A client without `build_request` gives {}."""

    def params() -> dict:
        build = getattr(client, "build_request", None)
        if not callable(build):
            return {}
        body = {k: v for k, v in build([], None).items() if k not in ("model", "messages", "tools")}
        extra = getattr(getattr(client, "settings", None), "extra_body", None)
        return {**body, "extra_body": dict(extra)} if extra else body

    return params


def own_memory(hit: Any, session_id: str | None) -> bool:
    """Whether memory `hit` (a search hit dict) was recorded by session `session_id` (its
    `metadata["session_id"]`: the episode of one of its turns, or a memory the agent added).

    Such a memory is not evidence for that session: the session's history holds the turn
    it came from, verbatim or in a compaction summary (whose sections carry progress,
    decisions, key facts and the files changed), and a resumed session rebuilds that
    history from its transcript. Memory is the cross-session layer (DESIGN.md section 1);
    sending it back to its own session would state the same fact twice."""
    meta = hit.get("metadata") if isinstance(hit, dict) else None
    return bool(session_id) and isinstance(meta, dict) and meta.get("session_id") == session_id


def _split_system(history: list[dict]) -> tuple[list[dict], list[dict]]:
    """(leading system/developer messages, the rest with its call/result pairing repaired:
    a call without a result gets "not executed: interrupted", case C02)."""
    n = 0
    while n < len(history) and history[n].get("role") in ("system", "developer"):
        n += 1
    return list(history[:n]), repair_pairing(list(history[n:]))
