"""The loop's boundaries, as small protocols (the loop depends on no concrete class).

`ChatModel` (`chat(...) -> ChatResponse`), `ContextAssembler` (`assemble`, optional
`compact`), `PassthroughAssembler` and `AssembledRequest`, whose records the loop turns
into events; the context package never imports the agent package (docs/architecture.md).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ctxagent.context.compaction.compactor import CompactionRecord


@dataclass
class AssembledRequest:
    """What goes to the model: `messages` (OpenAI chat messages, system first) and `report`
    (layer sizes, dropped items, snapshot path...; passed on untouched), and what happened while
    building it, for the loop to emit: `compaction` (the automatic compaction's CompactionRecord,
    or None), `view` (its compacted view as JSON-ready data, for the transcript; None without one)
    and `notices` (texts to show the user)."""

    messages: list[dict[str, Any]]
    report: dict[str, Any] = field(default_factory=dict)
    compaction: CompactionRecord | None = None
    view: dict[str, Any] | None = None
    notices: list[str] = field(default_factory=list)


@runtime_checkable
class ContextAssembler(Protocol):
    """Builds each request. `state` keys the loop provides: session_id, turn, step, call_index
    (model calls so far in the session, from 1), task (this turn's user text), repo (str),
    model, context_window and max_output_tokens (tokens), protocol (native, xml or react: the
    snapshot holds the request as that protocol sends it, docs/protocols.md)."""

    def assemble(self, history: list[dict[str, Any]], tools: list[dict[str, Any]], state: dict[str, Any]) -> AssembledRequest:
        """Return the request for this model call; must keep tool-call pairing valid."""
        ...


class ChatModel(Protocol):
    """The model client as the loop uses it (see `ctxagent.llm.client.LLMClient.chat`)."""

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        on_delta: Callable[[Any], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Any:
        """Send one request; return a ChatResponse; raise `LLMError` subclasses."""
        ...


class PassthroughAssembler:
    """The default assembler: sends the history unchanged (the system message included)."""

    def assemble(self, history: list[dict[str, Any]], tools: list[dict[str, Any]], state: dict[str, Any]) -> AssembledRequest:
        """Return `history` as the messages, with a report of {"assembler": "passthrough", "messages": n}."""
        return AssembledRequest(messages=list(history), report={"assembler": "passthrough", "messages": len(history)})
