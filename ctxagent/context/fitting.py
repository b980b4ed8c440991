"""The last step of every request: make it fit the input budget, or say clearly why not.

Seven deterministic steps, each run once, no model call (docs/compaction.md, "Fitting
every request"): mask, share the room, drop history units, state layers, summaries, cut
the last unit's results, put back what fits. Still too big: `ContextOverflowError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxagent.context.compaction.masking import mask_observations
from ctxagent.context.compaction.sections import is_summary_message
from ctxagent.context.messages import history_units, truncate_tool_result
from ctxagent.context.structure import separator
from ctxagent.errors import ContextOverflowError
from ctxagent.templates import render

#: Session-state parts in the order they are given up when the request does not fit.
STATE_DROP_ORDER = ("memory", "notes", "todos", "memory_files")
_MIN_RESULT_CHARS = 200
#: Step 2: the last unit's tool results may keep this share of the room beside the parts never given up.
LATEST_RESULTS_SHARE = 0.5


#: Session-state parts sent after the newest message, and their section there; any other
#: part ("memory_files": AGENTS.md / Memory.md text) is appended to the system message.
REQUEST_SECTIONS = {"todos": "State", "notes": "Evidence", "memory": "Evidence"}


def build_request(system: list[dict], state: list[tuple[str, str]], convo: list[dict],
                  marks: dict[int, str] | None = None) -> list[dict]:
    """The request: system messages, the conversation, the `[State]`/`[Evidence]` block.
    `state`: (part name, text) pairs (`StateSelection.parts`); `marks`: {convo index: block}
    earlier blocks, each sent again right after that message (a state update that became part
    of the history, issue 16); the current block goes last only when the last mark differs.
    Other parts go into the first system message. Reference: docs/compaction.md."""
    in_request = [(n, t) for n, t in state if n in REQUEST_SECTIONS]
    in_system = [(n, t) for n, t in state if n not in REQUEST_SECTIONS]
    messages = list(_with_system(system, in_system))
    block = state_block(in_request) if in_request else None
    last = None
    for k, message in enumerate(convo):
        messages.append(message)
        text = (marks or {}).get(k) if block is not None else None
        if text is not None and _mark_fits(convo, k):
            _add_block(messages, text)
            last = text
    if block is not None and block != last:
        _add_block(messages, block)
    return alternate(messages)


def pending_block(state: list[tuple[str, str]], convo: list[dict], marks: dict[int, str] | None) -> str | None:
    """The block `build_request` sends after the newest message (None: none, or the last
    mark already says it): the caller keeps it as a mark at the newest message."""
    in_request = [(n, t) for n, t in state if n in REQUEST_SECTIONS]
    if not in_request:
        return None
    block = state_block(in_request)
    last = next((marks[k] for k in sorted(marks or {}, reverse=True) if _mark_fits(convo, k)), None)
    return None if block == last else block


def _mark_fits(convo: list[dict], k: int) -> bool:
    """A block may follow convo[k] unless that splits a tool call from its results."""
    if not 0 <= k < len(convo) or convo[k].get("tool_calls"):
        return False
    return k + 1 == len(convo) or convo[k + 1].get("role") != "tool"


def _add_block(messages: list[dict], block: str) -> None:
    """Put `block` after the last message: into it when it is a user message (not a summary),
    else as a user message of its own."""
    last = messages[-1] if messages else None
    if last is not None and last.get("role") == "user" and not is_summary_message(last):
        messages[-1] = with_state_block(last, block)
    else:
        messages.append({"role": "user", "content": block})


#: The assistant message put between two adjacent user messages (see `alternate`).
BRIDGE = {"role": "assistant", "content": "Ok."}


def alternate(messages: list[dict]) -> list[dict]:
    """`messages` with BRIDGE between any two adjacent user messages (a compaction summary
    after the task, or a task and a request whose history did not fit): chat templates that
    demand alternating roles (Mistral-style ones, behind vLLM or llama.cpp) reject two user
    messages in a row. The bridge is part of the request, so it is counted like the rest."""
    out: list[dict] = []
    for message in messages:
        if out and message.get("role") == "user" and out[-1].get("role") == "user":
            out.append(dict(BRIDGE))
        out.append(message)
    return out


def _with_system(system: list[dict], parts: list[tuple[str, str]]) -> list[dict]:
    if not parts:
        return list(system)
    text = render("ctxagent.context.state", "session_state", sections="\n\n".join(body for _, body in parts))
    if system:
        first = system[0]
        return [{**first, "content": f"{first.get('content') or ''}\n\n{text}"}, *system[1:]]
    return [{"role": "system", "content": text}]


def state_block(parts: list[tuple[str, str]]) -> str:
    """The `[State]` / `[Evidence]` block of the parts (todos, notes, memory), in that order."""
    sections: dict[str, list[str]] = {"State": [], "Evidence": []}
    for name, text in parts:
        sections[REQUEST_SECTIONS[name]].append(text)
    return render("ctxagent.context.state", "state_block", sections=[
        (title, separator(title).join(bodies)) for title, bodies in sections.items() if bodies])


def with_state_block(message: dict, block: str) -> dict:
    """A copy of the user `message` with `block` after its content (a text part after the
    others when the content is a list of parts)."""
    content = message.get("content")
    if isinstance(content, list):
        return {**message, "content": [*content, {"type": "text", "text": block}]}
    return {**message, "content": f"{content or ''}\n\n{block}" if content else block}


@dataclass
class Fit:
    """A request that fits: `messages`, the `convo` part with `origins` (view index of each
    message), the state layers kept, the `actions` taken and the view indexes `trimmed`."""

    messages: list[dict]
    convo: list[dict]
    origins: list[int]
    state: list[tuple[str, str]]
    tokens: int
    actions: list[str] = field(default_factory=list)
    trimmed: list[int] = field(default_factory=list)
    masked: list[int] = field(default_factory=list)
    block: str | None = None  # the state block sent after the newest message (None: the last mark says it)


class _Fitter:
    def __init__(self, system, state, convo, tools, counter, limit, marks=None) -> None:
        self.system, self.state, self.tools, self.counter, self.limit = system, list(state), tools, counter, limit
        self.marks: dict[int, str] = dict(marks or {})  # view index -> the state block sent after it
        self.convo, self.origins = list(convo), list(range(len(convo)))
        self.fit = Fit([], [], [], [], 0)
        self.removed: dict[int, dict] = {}  # view index -> message, of what steps 3 and 5 took out
        self.dropped_state: list[tuple[str, str]] = []

    def tokens(self) -> int:
        return self._count(self.state, self.convo)

    def _count(self, state: list[tuple[str, str]], convo: list[dict], origins: list[int] | None = None) -> int:
        """Tokens of the request built from `state` and `convo` (view indexes `origins`, default
        this fit's), with this fit's system, tools and marks."""
        return self.counter.count_messages(build_request(self.system, state, convo, self._marks(origins)), self.tools)

    def _marks(self, origins: list[int] | None = None) -> dict[int, str]:
        """The marks by position in the convo whose view indexes are `origins` (default: this fit's)."""
        return {k: self.marks[v] for k, v in enumerate(self.origins if origins is None else origins) if v in self.marks}

    def protected(self) -> set[int]:
        users = [i for i, m in enumerate(self.convo) if m.get("role") == "user" and not is_summary_message(m)]
        keep = {i for i, m in enumerate(self.convo) if is_summary_message(m)}
        return keep | ({users[0], users[-1]} if users else set())

    def units(self) -> list[tuple[int, int]]:
        spans, start = [], 0
        for unit in history_units(self.convo):
            spans.append((start, start + len(unit)))
            start += len(unit)
        return spans

    def mask(self, keep: int) -> None:
        convo, masked = mask_observations(self.convo, keep_recent=keep)
        if masked:
            self.convo = convo
            self.fit.masked += [self.origins[i] for i in masked]
            self.fit.actions.append(f"masked {len(masked)} tool results")

    def drop_units(self, total: int) -> int:
        spans, protected = self.units(), self.protected()
        drop: set[int] = set()
        for start, end in spans[:-1]:
            if total <= self.limit:
                break
            if protected & set(range(start, end)):
                continue
            total -= sum(self.counter.count_message(self.convo[i]) for i in range(start, end))
            drop.update(range(start, end))
        self._remove(drop, "dropped {n} oldest history messages")
        return self.tokens()

    def _remove(self, drop: set[int], action: str) -> None:
        if not drop:
            return
        self.fit.trimmed += [self.origins[i] for i in sorted(drop)]
        self._take_out(drop)
        self.fit.actions.append(action.format(n=len(drop)))

    def _take_out(self, drop: set[int]) -> None:
        """Move the messages at convo indexes `drop` to `removed` (keyed by view index)."""
        self.removed.update((self.origins[i], self.convo[i]) for i in drop)
        self.convo = [m for i, m in enumerate(self.convo) if i not in drop]
        self.origins = [o for i, o in enumerate(self.origins) if i not in drop]

    def drop_state(self) -> int:
        total = self.tokens()
        for name in STATE_DROP_ORDER:
            if total <= self.limit:
                break
            if any(n == name for n, _ in self.state):
                self.dropped_state += [(n, t) for n, t in self.state if n == name]
                self.state = [(n, t) for n, t in self.state if n != name]
                self.fit.actions.append(f"left out the {name} layer")
                total = self.tokens()
        return total

    def drop_summaries(self) -> int:
        self._remove({i for i, m in enumerate(self.convo) if is_summary_message(m)}, "dropped {n} summaries")
        return self.tokens()

    def share_room(self, total: int) -> int:
        """Step 2: cut the last unit's tool results to what the request needs, but never
        below LATEST_RESULTS_SHARE of the room beside the parts never given up."""
        results = self._last_results()
        if not results:
            return total
        now = self._tokens_of(results)
        keep = self.protected() | set(results)
        kept = [m for i, m in enumerate(self.convo) if i in keep]
        others = self._count(self.state, kept, [o for i, o in enumerate(self.origins) if i in keep]) - now
        floor = int(LATEST_RESULTS_SHARE * max(0, self.limit - others))
        target = max(floor, now - (total - self.limit))
        if target >= now:
            return total
        for i in results:
            content = str(self.convo[i].get("content") or "")
            chars = max(_MIN_RESULT_CHARS, int(len(content) * target / now * 0.95))
            if len(content) > chars:
                self.convo[i] = {**self.convo[i], "content": truncate_tool_result(content, chars)}
        self.fit.actions.append(f"cut the latest tool results to about {target:,} tokens to leave room for the history")
        return self.tokens()

    def _last_results(self) -> list[int]:
        start, end = self.units()[-1] if self.convo else (0, 0)
        return [i for i in range(start, end) if self.convo[i].get("role") == "tool"]

    def put_back(self, total: int) -> int:
        """Step 7: put back, while they fit, the summaries, state layers and history units
        taken out (in that order; units newest first)."""
        summaries = [v for v, m in self.removed.items() if is_summary_message(m)]
        if summaries:
            total = self._try_units([summaries], total)
        for name in reversed(STATE_DROP_ORDER):
            parts = [(n, t) for n, t in self.dropped_state if n == name]
            if parts:
                trial = self.state + parts
                tokens = self._count(trial, self.convo)
                if tokens <= self.limit:
                    self.state, total = trial, tokens
                    self.dropped_state = [(n, t) for n, t in self.dropped_state if n != name]
                    self.fit.actions.append(f"put back the {name} layer")
        units = _spans(sorted(v for v in self.removed if not is_summary_message(self.removed[v])), self.removed)
        total = self._try_units(units[::-1], total)
        self.fit.trimmed = [v for v in self.fit.trimmed if v in self.removed]
        return total

    def _try_units(self, units: list[list[int]], total: int) -> int:
        """Put back each unit (view indexes) that fits the room left, counted exactly; a
        unit's own tokens, less the one bridge it may make unneeded (`alternate`), rule out
        the others without a count. Passes repeat while one puts something back, as a unit
        put back can change its neighbours' bridges."""
        saving = self.counter.count_message(BRIDGE)
        n = 0
        pending = list(units)
        while pending:
            left = []
            for unit in pending:
                cost = sum(self.counter.count_message(self.removed[v]) for v in unit)
                if total + cost - saving > self.limit:
                    left.append(unit)
                    continue
                self._insert(unit)
                tokens = self.tokens()
                if tokens <= self.limit:
                    total, n = tokens, n + len(unit)
                else:
                    self._take_out({self.origins.index(v) for v in unit})
                    left.append(unit)
            if len(left) == len(pending):
                break
            pending = left
        if n:
            self.fit.actions.append(f"put back {n} of the messages taken out (room left after the cuts)")
        return total

    def _insert(self, unit: list[int]) -> None:
        pairs = sorted([*zip(self.origins, self.convo), *((v, self.removed.pop(v)) for v in unit)], key=lambda p: p[0])
        self.origins, self.convo = [v for v, _ in pairs], [m for _, m in pairs]

    def cut_last_unit(self, total: int) -> int:
        results = self._last_results()
        if not results:
            return total
        room_chars = max(_MIN_RESULT_CHARS, (self.limit - (total - self._tokens_of(results))) * 2 // len(results))
        for i in results:
            content = str(self.convo[i].get("content") or "")
            if len(content) > room_chars:
                self.convo[i] = {**self.convo[i], "content": truncate_tool_result(content, room_chars)}
        self.fit.actions.append(f"cut the latest tool results to {room_chars:,} characters")
        return self.tokens()

    def _tokens_of(self, indexes: list[int]) -> int:
        return sum(self.counter.count_message(self.convo[i]) for i in indexes)

    def done(self, total: int) -> Fit:
        fit = self.fit
        fit.messages = build_request(self.system, self.state, self.convo, self._marks())
        fit.block = pending_block(self.state, self.convo, self._marks())
        fit.convo, fit.origins, fit.state, fit.tokens = self.convo, self.origins, self.state, total
        return fit


def fit_request(system: list[dict], state: list[tuple[str, str]], convo: list[dict], *, tools: list[dict] | None,
                counter: Any, limit: int, keep_tool_results: int = 3, marks: dict[int, str] | None = None) -> Fit:
    """The request built from the layers, within `limit` tokens (see the module doc).

    `counter`: a `TokenCounter` (`count_messages`, `count_message`); `marks`: as for
    `build_request`, by index in `convo`. Raises `ContextOverflowError` when even the
    irreducible part exceeds `limit`.
    """
    fitter = _Fitter(system, state, convo, tools, counter, limit, marks)
    total = fitter.tokens()
    steps = (lambda t: (fitter.mask(keep_tool_results), fitter.tokens())[1], fitter.share_room, fitter.drop_units,
             lambda t: fitter.drop_state(), lambda t: fitter.drop_summaries(), fitter.cut_last_unit)
    for step in steps:
        if total <= limit:
            break
        total = step(total)
    if total <= limit:
        return fitter.done(fitter.put_back(total))
    raise _overflow(fitter, total)


def _spans(views: list[int], removed: dict[int, dict]) -> list[list[int]]:
    """The removed history units, each as its view indexes: consecutive indexes, a tool
    call message and the results that follow it staying together (case C01)."""
    units: list[list[int]] = []
    for v in views:
        if units and units[-1][-1] == v - 1 and removed[v].get("role") == "tool":
            units[-1].append(v)
        else:
            units.append([v])
    return units


def _overflow(fitter: _Fitter, total: int) -> ContextOverflowError:
    system = fitter.counter.count_messages(fitter.system) if fitter.system else 0
    tools = fitter.counter.count_tools(fitter.tools)
    history = fitter.counter.count_messages(fitter.convo)
    return ContextOverflowError(
        f"the request cannot fit the model's input budget of {fitter.limit:,} tokens "
        f"(context window minus max output tokens): even reduced to the system prompt ({system:,} tokens), "
        f"the tool schemas ({tools:,}), the task, the latest request and the latest tool results "
        f"({history:,}) it takes {total:,} tokens. Shorten the task or the request, offer fewer tools, "
        f"lower max_output_tokens, or use a model with a larger context window."
    )
