"""`ContextAssembler`: the context engine's side of the loop seam.

`assemble(history, tools, state)` builds each request under the token budget and returns
an `AssembledRequest` (messages, report, compaction, view, notices); `compact` compacts on
demand; snapshots go through the `SnapshotRecorder` it is given, with the request as the
model gets it (`wire_request`: a text protocol's history as text, docs/protocols.md).
Reference: docs/compaction.md.
"""

from __future__ import annotations

import copy
import time
from typing import Any, Callable, Iterable

from ctxagent.context.compaction.compactor import (
    Budget,
    CompactionConfig,
    CompactionRecord,
    NothingToCompact,
    Prefix,
    compact_conversation,
)
from ctxagent.context.compaction.sections import summary_message
from ctxagent.context.compaction.view import CompactedView, fingerprint
from ctxagent.context.fitting import build_request, fit_request
from ctxagent.context.messages import canonical_message, repair_pairing, truncate_tool_result
from ctxagent.context.packet import ContextConfig
from ctxagent.context.record.recorder import SnapshotRecorder
from ctxagent.context.record.report import build_report, message_preview
from ctxagent.context.request import AssembledRequest
from ctxagent.context.state.read import gather_state
from ctxagent.context.state.select import StateSelection, scoring_query, select_state, selection_config
from ctxagent.protocols import get_protocol
from ctxagent.redaction import redact
from ctxagent.text.tokens import TokenCounter

#: Each context-length error from the server shrinks the budget we count against by this factor.
OVERFLOW_SHRINK = 0.9
_MIN_SAFETY = 0.5


class ContextAssembler:
    """Builds every request of a session; `model`: ModelSettings, `context`: Settings.context.
    Dependencies are constructor arguments (summarize, load_state, memory_search, on_compaction,
    on_view, on_notice, recorder, resume, before_compaction), never set afterwards; each is
    described in docs/compaction.md ("The assembler's arguments"). Raises ConfigError.
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
                 on_notice: Callable[[str], None] | None = None,
                 recorder: SnapshotRecorder | None = None, resume: dict | None = None,
                 before_compaction: Callable[[], tuple[str | None, bool]] | None = None) -> None:
        self.model = model
        self.before_compaction = before_compaction
        self.secrets = list(secrets)
        self.config = config or CompactionConfig.from_settings(context)
        self.summarize = summarize
        self.counter = counter or TokenCounter(getattr(model, "model", None))
        self.recorder = recorder or SnapshotRecorder(getattr(model, "model", None), counter=self.counter,
                                                     enabled=snapshots, secrets=self.secrets,
                                                     request_params=request_params)
        self.load_state = load_state
        self.memory_search = memory_search
        self.on_compaction = on_compaction
        self.select_config = select_config or selection_config(context)
        self.clock = clock
        self.on_view, self.on_notice = on_view, on_notice
        self._resumed: Any = resume  # a resumed session's view record, taken at the first call
        self._notices: list[str] = []  # said since the last request returned them (`take_notices`)
        self.view = CompactedView()
        self.records: list[CompactionRecord] = []
        self.compacted_turns: set[Any] = set()  # the turns that compacted (any number of times each)
        self.summary_wait: int | None = None  # no automatic summary below this many tokens (the thrash guard)
        self.safety = 1.0
        self._last_selection = StateSelection()
        self._last_tools: list[dict] = []
        self._protocol: str | None = None  # the text protocol of the last request (None: native tool calls)
        self.marks: dict[int, tuple[str, str]] = {}  # history index -> (its fingerprint, the state block sent after it)

    @property
    def calls(self) -> int:
        """The number of the last call numbered (the recorder's)."""
        return self.recorder.calls

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
            self.recorder.write_pending(dict(state or {}), unsent=f"{type(exc).__name__}: {exc}", notice=self._notice)
            raise

    def preview(self, history: list[dict], tools: list[dict] | None, state: dict) -> AssembledRequest:
        """What `assemble` would send next, without a model call, a snapshot or any change of state.
        A summary the call would ask for is the extractive stand-in here; the report's
        `compaction.stand_in` says so (docs/compaction.md)."""
        twin = copy.copy(self)
        twin.view, twin.records = self.view.copy(), list(self.records)
        twin.compacted_turns, twin.marks = set(self.compacted_turns), dict(self.marks)
        twin.recorder = self.recorder.fork()  # a preview's records belong to no snapshot
        twin.before_compaction = None  # nor runs PreCompact hooks
        asked: list[tuple[list[dict], list[dict] | None]] = []
        if self.summarize is not None:
            def stand_in(messages: list[dict], tools: list[dict] | None = None) -> str:  # the summary call, not made
                asked.append((messages, tools))
                raise _NoModelCall("a preview makes no model call")

            twin.summarize = stand_in
        result = twin._assemble(history, tools or [], state, dry_run=True)
        compaction = result.report.get("compaction")
        if asked and compaction is not None and compaction.get("method") == "extractive":
            _mark_stand_in(result.report, compaction, self.counter.count_messages(*asked[-1]))
        return result

    def compact(self, history: list[dict], focus: str | None = None, *, trigger: str = "overflow") -> list[dict]:
        """Compact now; return the new history (system first) for the loop to keep. `trigger`:
        "overflow" (the budget also shrinks by OVERFLOW_SHRINK) or "manual" (`/compact`: a summary
        is always written). The record is in `last_record`; `on_compaction` is not called (the
        caller records it). Raises NothingToCompact (with the request's share of the window) when
        there is nothing to summarize, or (not "manual") the summary would not shrink it: unchanged."""
        if trigger == "overflow":
            self.safety = max(_MIN_SAFETY, self.safety * OVERFLOW_SHRINK)
        system, convo = _split_system(history)
        self._take_resumed(convo, report=True)
        view, origins = self.view.apply(convo)
        new, record, _ = self._compact(system, view, origins, convo, self._last_tools, self._last_selection,
                                       trigger=trigger, focus=focus, force=True, own_snapshot=True)
        if not record.dropped and (trigger == "manual" or not record.masked):
            tokens = self.counter.count_messages(build_request(system, self._last_selection.parts, view),
                                                 self._last_tools)
            share = 100 * tokens / max(1, self.budget()["context_window"])
            raise NothingToCompact(f"nothing to compact: {share:.0f}% of the window")
        if record.tokens_after >= record.tokens_before and trigger != "manual":  # no room won: no compaction
            raise NothingToCompact(f"nothing to compact: its {record.method} summary would not shrink the context "
                                   f"({record.tokens_before:,} -> {record.tokens_after:,} tokens); the history is unchanged")
        self._accept(record)
        self.view.adopt(new)
        return [*system, *new]

    @property
    def last_record(self) -> CompactionRecord | None:
        """The most recent compaction of this session, or None."""
        return self.records[-1] if self.records else None

    def _take_resumed(self, convo: list[dict], *, report: bool) -> None:
        """Install the view given as `resume`, if it still fits `convo`; else say why not."""
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
        self._protocol = state.get("protocol") if state.get("protocol") != "native" else None
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
        tokens = self.counter.count_messages(build_request(system, parts, view, self._marks(convo, origins)), tools)
        record = None
        turn = state.get("turn_id", state.get("turn", sum(1 for m in convo if m.get("role") == "user")))
        if tokens > budget["trigger"]:
            record, view, origins = self._auto_compact(system, view, origins, convo, tools, selection, turn, tokens,
                                                       budget)
        fit = fit_request(system, parts, view, tools=tools, counter=self.counter, limit=budget["limit"],
                          keep_tool_results=self.config.keep_tool_results, marks=self._marks(convo, origins))
        if fit.trimmed:  # history left out is either summarized or said: the fit step never drops it silently
            forced, view, origins = self._auto_compact(system, view, origins, convo, tools, selection, turn,
                                                       fit.tokens, budget, force=True)
            record = _merged(record, forced)
            fit = fit_request(system, parts, view, tools=tools, counter=self.counter, limit=budget["limit"],
                              keep_tool_results=self.config.keep_tool_results, marks=self._marks(convo, origins))
            if fit.trimmed:
                self._notice(f"{len(fit.trimmed)} history message(s) did not fit the input budget of "
                             f"{budget['limit']:,} tokens even after compaction and are left out of this request "
                             "(`ctxagent inspect` lists them)")
        messages = [canonical_message(m) for m in repair_pairing(fit.messages)]
        call = self.recorder.number(state)
        report = build_report(call=call, state=state, budget=budget, system=system, selection=selection, fit=fit,
                              tools=tools, counter=self.counter, origins=origins, convo=convo, cut=cut,
                              record=record, problems=problems, n_system=len(system))
        request = AssembledRequest(messages=messages, report=report, compaction=record)
        if not dry_run:
            self._keep_mark(convo, origins, fit)
            self.recorder.write_call(state, call, *wire_request(state, messages, tools, report), report)
            request.view = self._view_record(convo, record) if record is not None else None
            request.notices = self.take_notices()
            if record is not None and self.on_compaction is not None:
                self.on_compaction(record)
            if request.view is not None and self.on_view is not None:  # after its event: resume rebuilds this view
                self.on_view(request.view)
        return request

    def _marks(self, convo: list[dict], origins: list[int | None]) -> dict[int, str]:
        """{view index: state block} of the state updates still in the view (their message unchanged)."""
        return {v: self.marks[o][1] for v, o in enumerate(origins)
                if o is not None and o in self.marks and o < len(convo) and fingerprint(convo[o]) == self.marks[o][0]}

    def _keep_mark(self, convo: list[dict], origins: list[int | None], fit: Any) -> None:
        """A state block sent after the newest message stays there in later requests (a state
        update in the history, cached with it; issue 16): remember it by that message."""
        h = origins[fit.origins[-1]] if fit.block is not None and fit.origins else None
        if h is not None:
            self.marks[h] = (fingerprint(convo[h]), fit.block)

    def _auto_compact(self, system, view, origins, convo, tools, selection: StateSelection, turn, tokens: int,
                      budget: dict, *, force: bool = False):
        """An automatic compaction of `view` (`tokens` over the trigger, or `force`d because the fit
        step would leave history out): masking first, a summary when masking is not enough and the
        thrash guard allows it. Returns (record or None, view, origins); a compaction that frees
        less than `min_free_ratio` of the budget (a masking one) or nothing (a summary) is dropped."""
        min_free = int(self.config.min_free_ratio * budget["limit"])
        over = tokens > budget["limit"]
        summary = force or over or self.summary_wait is None or tokens > self.summary_wait
        if summary and self.before_compaction is not None:  # PreCompact hooks (trigger "auto")
            said, blocked = self.before_compaction()
            if said:
                self._notice(said)
            summary = summary and not blocked  # a hook blocked the summary: masking only (docs/hooks.md)
        new, record, new_origins = self._compact(system, view, origins, convo, tools, selection, trigger="auto",
                                                 turn=turn, summary=summary, force=force)
        freed = record.tokens_before - record.tokens_after
        if freed <= 0 or (record.method == "masking" and freed < min_free and not over and not force):
            return None, view, origins  # freed nothing worth a change: not announced, not counted
        self._accept(record)
        if record.method != "masking":
            self.summary_wait = record.tokens_after + min_free if freed < min_free else None
        self.view.install(convo, new, new_origins)
        return record, new, new_origins

    def _accept(self, record: CompactionRecord) -> None:
        self.compacted_turns.add(record.turn_id)
        self.records.append(record)

    def _compact(self, system, view, origins, convo, tools, selection: StateSelection, *, trigger, focus=None,
                 force=False, turn=None, own_snapshot=False, summary=True):
        """Run compaction on `view`; returns (new view, record, origins of the new view). The summary
        is written from the original of each message the view masked or cut (`convo[origin]`)."""
        parts, state = selection.parts, selection.summary_state
        budget = self.budget(state)

        def measure(messages: list[dict]) -> int:
            return self.counter.count_messages(build_request(system, parts, messages), tools)

        marks = self._marks(convo, origins)

        def as_sent(messages: list[dict]) -> list[dict]:  # the request `assemble` sent for `view` (`messages`)
            return [canonical_message(m) for m in repair_pairing(build_request(system, parts, messages, marks))]

        # the summary request as the conversation's own prefix (cached by the provider), unless the server just
        # refused a request as too long or a text protocol has no tool schemas to send (docs/compaction.md)
        prefix = (Prefix(as_sent, list(tools or []), one_break=trigger == "auto")
                  if trigger != "overflow" and self._protocol is None else None)

        originals = {i: convo[o] for i, (m, o) in enumerate(zip(view, origins))
                     if o is not None and o < len(convo) and m is not convo[o] and m != convo[o]}
        new, record = compact_conversation(
            view, measure=measure, count_text=self.counter.count, budget=Budget(budget["target"], budget["limit"]),
            config=self.config, summarize=self.recorder.recorded(self.summarize, trigger, notice=self._notice,
                                                                 own_snapshot=own_snapshot, focus=focus),
            state=state, focus=focus, force=force, trigger=trigger, summary=summary, originals=originals,
            prefix=prefix)
        new_origins = [origins[i] if i is not None else None for i in record.kept]
        n_system = len(system)
        to_history = lambda idx: [origins[i] + n_system for i in idx if i is not None and origins[i] is not None]
        record.masked, record.dropped, record.kept = to_history(record.masked), to_history(record.dropped), [
            (o + n_system if o is not None else None) for o in new_origins]
        record.turn_id = turn if turn is not None else state.get("turn")
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


def _merged(first: CompactionRecord | None, second: CompactionRecord | None) -> CompactionRecord | None:
    """One record for two compactions of the same request: the second, from the first's start."""
    if first is None or second is None:
        return second or first
    second.tokens_before, second.messages_before = first.tokens_before, first.messages_before
    second.masked = sorted(set(first.masked) | set(second.masked))
    return second


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


def wire_request(state: dict, messages: list[dict], tools: list[dict] | None,
                 report: dict) -> tuple[list[dict], list[dict] | None]:
    """(messages, tools) as the model gets them, for the snapshot: with a text protocol
    (`state["protocol"]` "xml" or "react", docs/protocols.md) the history written as text and
    no tools, and the report says which protocol; otherwise the request as built."""
    name = state.get("protocol")
    if not name or name == "native":
        return messages, tools
    report["protocol"] = name
    return get_protocol(str(name)).encode(messages, tools or [])


def own_memory(hit: Any, session_id: str | None) -> bool:
    """Whether memory `hit` (a search hit dict) was recorded by session `session_id` (its
    `metadata["session_id"]`). Such a memory is not evidence for that session: its history
    holds it already (docs/compaction.md, "The assembler's arguments")."""
    meta = hit.get("metadata") if isinstance(hit, dict) else None
    return bool(session_id) and isinstance(meta, dict) and meta.get("session_id") == session_id


def _split_system(history: list[dict]) -> tuple[list[dict], list[dict]]:
    """(leading system/developer messages, the rest with its call/result pairing repaired:
    a call without a result gets "not executed: interrupted", case C02)."""
    n = 0
    while n < len(history) and history[n].get("role") in ("system", "developer"):
        n += 1
    return list(history[:n]), repair_pairing(list(history[n:]))
