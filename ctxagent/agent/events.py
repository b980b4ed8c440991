"""Events the agent loop emits, and the sink type that consumes them.

The loop never prints. It calls every sink with each event, in order; the rich
terminal renderer (`ctxagent.cli.render`) and the `--json` printer
(`ctxagent.cli.jsonout`) are two sinks, and the session transcript records the
non-streaming ones. Every event is a dataclass with a class-level `type` string and
`to_dict()` giving `{"type": ..., <fields>}` (JSON-ready). See docs/architecture.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, ClassVar, Sequence


@dataclass
class Event:
    """Base class: `type` names the event kind on the wire (`--json`, transcripts)."""

    type: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        """{"type": <kind>, **fields}."""
        return {"type": self.type, **asdict(self)}


@dataclass
class TurnStart(Event):
    """A user request starts a turn. `turn` counts from 1 within the session."""

    type: ClassVar[str] = "turn_start"
    session_id: str
    turn: int
    task: str


@dataclass
class TextDelta(Event):
    """A fragment of the model's visible answer, as streamed."""

    type: ClassVar[str] = "text_delta"
    text: str


@dataclass
class ReasoningDelta(Event):
    """A fragment of the model's reasoning (thinking models), as streamed; never the answer."""

    type: ClassVar[str] = "reasoning_delta"
    text: str


@dataclass
class ToolCallEvent(Event):
    """The model asked for a tool. `arguments` is the RAW string the model sent (case L01)."""

    type: ClassVar[str] = "tool_call"
    call_id: str
    name: str
    arguments: str
    step: int


@dataclass
class ApprovalRequest(Event):
    """A tool needs approval; `preview` is the plain diff, the command or the code. `auto`:
    pre-approved (--yes; for commands `auto_reason` says why: a rule, --allow-exec, an
    "always"). `language`: "bash" or "python" for a command or code ("" for a diff);
    `details`: lines shown above it (working directory, sandbox, mode)."""

    type: ClassVar[str] = "approval_request"
    call_id: str
    name: str
    preview: str
    auto: bool = False
    language: str = ""
    details: str = ""
    auto_reason: str = ""


@dataclass
class ToolResultEvent(Event):
    """The result sent to the model for one call. `status`: ran, invalid, unknown, refused, interrupted, crashed."""

    type: ClassVar[str] = "tool_result"
    call_id: str
    name: str
    ok: bool
    content: str
    status: str = "ran"


@dataclass
class Compaction(Event):
    """History was compacted after a context-length error. Counts are messages."""

    type: ClassVar[str] = "compaction"
    reason: str
    method: str
    messages_before: int
    messages_after: int
    details: dict[str, Any] = field(default_factory=dict)
    """The context engine's CompactionRecord as a dict (tokens, dropped indexes, summary), if any."""


@dataclass
class UsageEvent(Event):
    """Token use of one model call (`call`) and the running totals of the turn (`turn_*`)."""

    type: ClassVar[str] = "usage"
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None
    turn_prompt_tokens: int = 0
    turn_completion_tokens: int = 0
    turn_cost_usd: float | None = None


@dataclass
class TurnEnd(Event):
    """A turn ended. `reason`: finished, max_steps, max_tokens, max_cost, wall_time, interrupted, error,
    blocked (a hook);
    `answer` (None unless finished), `message` (one line when not finished), `steps` (model
    calls), `elapsed_s`, `tokens` (prompt + completion), `cost_usd` (None: prices unknown),
    `limits` (max_steps, max_task_tokens, max_cost_usd, wall_time_s)."""

    type: ClassVar[str] = "turn_end"
    reason: str
    answer: str | None = None
    message: str = ""
    steps: int = 0
    elapsed_s: float = 0.0
    tokens: int = 0
    cost_usd: float | None = None
    limits: dict[str, Any] = field(default_factory=dict)


@dataclass
class ErrorEvent(Event):
    """Something failed that the user should see; `kind` is the exception class name."""

    type: ClassVar[str] = "error"
    message: str
    kind: str = "CtxAgentError"


@dataclass
class Retry(Event):
    """A model call failed in a way worth retrying and is sent again after `wait_s` seconds:
    `attempt` of `attempts` at most; `message` is the line shown ("... retrying (2/5) in 1.2 s"),
    `kind` the error's class name, `status` its HTTP status (None: no response)."""

    type: ClassVar[str] = "retry"
    attempt: int
    attempts: int
    wait_s: float
    message: str
    kind: str = "ProviderError"
    status: int | None = None


@dataclass
class Notice(Event):
    """Something the user should know that is neither an error nor a step of the turn, e.g.
    that a resumed session's automatic compaction could not be reused and is redone."""

    type: ClassVar[str] = "notice"
    message: str


#: A consumer of events. Sinks must not raise; the loop isolates them anyway.
Sink = Callable[[Event], None]


def send(sinks: Sequence[Sink], event: Event) -> None:
    """Call every sink with `event`; a failing sink is skipped, never fatal (a broken
    renderer must not break a turn)."""
    for sink in sinks:
        try:
            sink(event)
        except Exception:
            pass

#: Event kinds too fine-grained to record in transcripts (the full text is recorded once).
STREAMING_TYPES = frozenset({TextDelta.type, ReasoningDelta.type})
