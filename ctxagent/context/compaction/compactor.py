"""Compaction of a long conversation, in steps (issue 4; issue 16: as often as needed).

1. observation masking (`masking`: the oldest tool results as placeholders, as many as the
target needs, the recent and small ones never; method "masking"); 2. a summary of the span
between the pinned task and the verbatim tail (method "llm", asked with the conversation's
own request as prefix, `Prefix`; else "extractive"), earlier summaries carried forward (C03).
The assembler adds the system and state layers and the thrash guard: docs/compaction.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from ctxagent.context.compaction.extractive import USER, extractive_summary, fact_span, fit_sections, user_facts
from ctxagent.context.compaction.masking import mask_observations, mask_to_target
from ctxagent.context.compaction.model_summary import build_summary_request, prefix_summary_request, takes_tools
from ctxagent.context.compaction.sections import (
    SECTIONS,
    insert_items,
    is_summary_message,
    parse_summary,
    summary_message,
    summary_problem,
)
from ctxagent.context.messages import history_units
from ctxagent.errors import ConfigError, CtxAgentError

Summarize = Callable[[list[dict]], str]
Measure = Callable[[list[dict]], int]


class NothingToCompact(CtxAgentError):
    """A compaction asked for (`/compact`) found nothing to summarize; the message says how full
    the window is ("nothing to compact: 12% of the window")."""


@dataclass
class CompactionConfig:
    """Knobs of compaction; read from `[context]` by `from_settings` (keys `compaction_<name>`)."""

    trigger_ratio: float = 0.8
    """Share of the context window at which compaction starts (issue 4: default 80%)."""
    target_ratio: float = 0.6
    """Share of the input budget (window - max output) a compaction aims to get under."""
    keep_tool_results: int = 3
    """Most recent tool results never masked."""
    keep_messages: int | None = None
    """Cap on messages in the verbatim tail (None: the tail is bounded by `tail_ratio` only)."""
    tail_ratio: float = 0.15
    """Share of the input budget the verbatim tail may take (issue 16: each compaction sends
    the tail again uncached; the summary keeps the facts of what it covers)."""
    forced_tail_ratio: float = 0.1
    """Share of the input budget the verbatim tail may take in a forced compaction (`/compact`,
    or after the server refused a request as too long), which must really shrink the context."""
    summary_max_tokens: int = 4000
    """Largest summary, in tokens."""
    tool_result_ratio: float = 0.25
    """Largest share of the input budget one tool result may take in a request (case C05)."""
    min_free_ratio: float = 0.1
    """Share of the input budget a compaction must free; after one that freed less, the next
    summary waits until the request has grown by this share (masking does the work meanwhile)."""

    def __post_init__(self) -> None:
        for name in ("trigger_ratio", "target_ratio", "tail_ratio", "forced_tail_ratio", "tool_result_ratio",
                     "min_free_ratio"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.05 <= value <= 1.0:
                raise ConfigError(f"context.compaction_{name} must be a number in [0.05, 1.0], got {value!r}",
                                  setting=f"context.compaction_{name}")
        for name, low in (("keep_tool_results", 0), ("summary_max_tokens", 64)):
            value = getattr(self, name)
            if not isinstance(value, int) or value < low:
                raise ConfigError(f"context.compaction_{name} must be an integer >= {low}, got {value!r}",
                                  setting=f"context.compaction_{name}")
        if self.keep_messages is not None and (not isinstance(self.keep_messages, int) or self.keep_messages < 1):
            raise ConfigError(f"context.compaction_keep_messages must be an integer >= 1, got {self.keep_messages!r}",
                              setting="context.compaction_keep_messages")

    @classmethod
    def from_settings(cls, context_settings: Any) -> "CompactionConfig":
        """Build from `Settings.context` (keys `compaction_trigger_ratio`, ...); unknown keys ignored.

        Raises ConfigError naming the key when a value is out of range.
        """
        values = {}
        for name in cls.__dataclass_fields__:
            value = getattr(context_settings, f"compaction_{name}", None) if context_settings is not None else None
            if value is not None:
                values[name] = value
        return cls(**values)


@dataclass
class CompactionRecord:
    """What one compaction did; the loop writes it to the transcript as a Compaction event.

    Indexes (`masked`, `dropped`) are positions in the history the compaction was given
    (the assembler maps them to the loop's history). Tokens are whole-request counts.
    """

    method: str  # "masking" | "llm" | "extractive"
    trigger: str  # "auto" | "manual" | "overflow"
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    masked: list[int] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    dropped_tool_call_ids: list[str] = field(default_factory=list)
    kept: list[int | None] = field(default_factory=list)  # source index of each new message (None: the summary)
    summary: str | None = None
    summary_error: str | None = None
    focus: str | None = None
    turn_id: Any = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field."""
        return asdict(self)


@dataclass
class _Split:
    pinned: int | None  # index of the task's first user message
    latest: int | None  # index of the latest user message
    tail_start: int  # first index of the verbatim tail
    middle: list[int]  # indexes summarized away


def _is_user(message: dict) -> bool:
    return message.get("role") == "user" and not is_summary_message(message)


def _unit_starts(convo: list[dict], start: int) -> list[int]:
    starts, index = [], start
    for unit in history_units(convo[start:]):
        starts.append(index)
        index += len(unit)
    return starts


def split_conversation(convo: list[dict], *, unit_tokens: Measure, tail_tokens: int,
                       keep_messages: int | None) -> _Split:
    """Choose pinned task, latest user message, verbatim tail (whole units from the end within
    `tail_tokens` and `keep_messages`, the last always) and the middle to summarize; an earlier
    summary is merged, never in the tail. Reference: docs/compaction.md."""
    users = [i for i, m in enumerate(convo) if _is_user(m)]
    pinned = users[0] if users else None
    latest = users[-1] if users else None
    first = 0 if pinned is None else pinned + 1
    summaries = [i for i, m in enumerate(convo) if is_summary_message(m)]
    floor = summaries[-1] + 1 if summaries else first
    starts = _unit_starts(convo, first)
    tail_start = starts[-1] if starts else len(convo)
    used = unit_tokens(convo[tail_start:]) if starts else 0
    for start, end in zip(reversed(starts[:-1]), reversed(starts[1:])):
        used += unit_tokens(convo[start:end])
        too_many = keep_messages is not None and len(convo) - start > keep_messages
        if start < floor or used > tail_tokens or too_many:
            break
        tail_start = start
    middle = [i for i in range(first, tail_start) if i != latest]
    if all(i in summaries for i in middle):
        middle = []
    return _Split(pinned, latest, tail_start, middle)


def _sources(convo: list[dict], split: _Split, summary: bool) -> list[int | None]:
    """Index in `convo` of each message of the compacted list (None for the summary)."""
    out: list[int | None] = [split.pinned] if split.pinned is not None else []
    if split.latest is not None and split.latest != split.pinned and split.latest < split.tail_start:
        out.append(split.latest)
    return out + ([None] if summary else []) + list(range(split.tail_start, len(convo)))


def _assemble(convo: list[dict], split: _Split, summary: str | None) -> list[dict]:
    return [convo[i] if i is not None else summary_message(summary or "") for i in _sources(convo, split, bool(summary))]


def _llm_summary(middle: list[dict], summarize: Summarize, state: dict | None, focus: str | None,
                 count_text: Callable[[str], int], max_tokens: int, request_tokens: int,
                 ask: tuple[list[dict], list[dict] | None] | None = None) -> tuple[str | None, str | None]:
    """(summary, None) from the model, or (None, why it was rejected). `ask`: the summary
    request as the conversation's own prefix and its tools; None: a transcript request."""
    try:
        if ask is not None and (not ask[1] or takes_tools(summarize)):
            text = summarize(ask[0], tools=ask[1]) if ask[1] else summarize(ask[0])
        else:
            text = summarize(build_summary_request(middle, state=state, focus=focus, max_tokens=max_tokens,
                                                   count_text=count_text, request_tokens=request_tokens))
    except Exception as exc:  # any failure of the injected model means: fall back
        return None, f"the summary call failed: {type(exc).__name__}: {exc}"
    problem = summary_problem(text)
    if problem:
        return None, problem
    missing = [f for f in user_facts(middle) if fact_span(f) not in text]
    text = insert_items(text.strip(), "facts", missing)
    if count_text(text) > max_tokens:
        parsed = parse_summary(text)
        sections = {key: [(USER if "(stated by user)" in it else 1, it) for it in parsed[key]] for key, _ in SECTIONS}
        text = fit_sections(sections, lambda t: count_text(t) <= max_tokens)
    return text, None


@dataclass
class Prefix:
    """How the assembler sends `compact_conversation`'s summary request (issue 16): `request(convo)`
    gives the request as sent for a conversation (system first, state block last), `tools` its
    schemas; the summary request is that request plus one user message, so a provider's prompt
    cache reuses it. `one_break`: mask and summarize in the same compaction, never mask alone."""

    request: Callable[[list[dict]], list[dict]]
    tools: list[dict] | None = None
    one_break: bool = False


def _prefix_ask(prefix: Prefix | None, convo: list[dict], masked_convo: list[dict], split: _Split,
                middle: list[dict], focus: str | None, max_tokens: int, measure: Measure,
                count_text: Callable[[str], int], limit: int) -> tuple[list[dict], list[dict] | None] | None:
    """(messages, tools) of the prefix summary request, or None when there is no prefix or the
    request with its question would not fit `limit` (the transcript request is sent then)."""
    if prefix is None:
        return None
    kept = masked_convo[split.tail_start] if split.tail_start < len(masked_convo) else None
    ask = prefix_summary_request(prefix.request(convo), covered=[convo[i] for i in split.middle], originals=middle,
                                 kept=kept, latest=split.latest not in (None, split.pinned), focus=focus,
                                 max_tokens=max_tokens)
    if measure(convo) + count_text(str(ask[-1]["content"])) + 8 > limit:
        return None
    return ask, prefix.tools


@dataclass
class Budget:
    """Token figures for one compaction: `target` to get under, `limit` the hard input budget."""

    target: int
    limit: int


def compact_conversation(
    convo: list[dict], *, measure: Measure, count_text: Callable[[str], int], budget: Budget,
    config: CompactionConfig | None = None, summarize: Summarize | None = None, state: dict | None = None,
    focus: str | None = None, force: bool = False, trigger: str = "auto", summary: bool = True,
    originals: dict[int, dict] | None = None, prefix: Prefix | None = None,
) -> tuple[list[dict], CompactionRecord]:
    """Compact `convo` (no system layer) -> (new list, CompactionRecord). `measure`, `count_text`:
    tokens; `budget`: target and limit; `summarize(messages[, tools=]) -> str` or None; `state`;
    `force`: summarize even when masking suffices; `summary`: False masks only; `originals`: index
    -> a message before masking (the summary's source); `prefix`: see `Prefix`. Never raises for
    a summarizer failure; the input is not modified (docs/compaction.md)."""
    config = config or CompactionConfig()
    before = measure(convo)
    stepped, masked = mask_to_target(convo, excess=max(0, before - budget.target), count_text=count_text,
                                     keep_recent=config.keep_tool_results)
    record = CompactionRecord("masking", trigger, before, before, len(convo), len(convo), masked=masked, focus=focus,
                              kept=list(range(len(convo))))
    after_mask = measure(stepped) if masked else before
    record.tokens_after = after_mask
    if (after_mask <= budget.target and not force and not (prefix and prefix.one_break)) or not summary:
        return stepped, record
    masked_convo, masked = mask_observations(convo, keep_recent=config.keep_tool_results)
    tail_tokens = int((config.forced_tail_ratio if force else config.tail_ratio) * budget.limit)
    base = measure([])
    unit_tokens = lambda part: measure(part) - base  # noqa: E731
    split = split_conversation(masked_convo, unit_tokens=unit_tokens, tail_tokens=tail_tokens,
                               keep_messages=config.keep_messages)
    if not split.middle and force and trigger == "manual":  # `/compact` writes a summary if anything is left to
        split = split_conversation(masked_convo, unit_tokens=unit_tokens, tail_tokens=0, keep_messages=1)
    if not split.middle:  # nothing to summarize: forced, mask all it may (a context-length error needs room)
        if force and masked:
            record.masked, record.tokens_after = masked, measure(masked_convo)
            return masked_convo, record
        return stepped, record
    originals = originals or {}
    middle = [originals.get(i) or convo[i] for i in split.middle]  # what the summary is written from: the originals
    room = budget.target - measure(_assemble(masked_convo, split, None)) - 8
    max_tokens = max(64, min(config.summary_max_tokens, room))
    text, error = (None, "no summarizer configured")
    if summarize is not None:
        ask = _prefix_ask(prefix, convo, masked_convo, split, middle, focus, max_tokens, measure, count_text,
                          budget.limit)
        text, error = _llm_summary(middle, summarize, state, focus, count_text, max_tokens, budget.limit, ask)
    method = "llm" if text else "extractive"
    if text is None:
        text = extractive_summary(middle, state, focus, fits=lambda t: count_text(t) <= max_tokens)
    new = _assemble(masked_convo, split, text)
    record.masked = masked
    record.method, record.summary, record.summary_error = method, text, (error if summarize is not None else None)
    record.dropped, record.kept = split.middle, _sources(masked_convo, split, True)
    record.dropped_tool_call_ids = [str(m.get("tool_call_id")) for m in middle if m.get("role") == "tool"]
    record.tokens_after, record.messages_after = measure(new), len(new)
    return new, record
