"""Wire the context engine into an agent: the assembler factory and the Compaction event.

`make_assembler(settings, repo, session, client=..., emit=...)` returns the
`ContextAssembler` for a session: budget from `settings.model`, compaction knobs from
`settings.context`, LLM summaries through `client` (extractive only without one),
snapshots with `settings.secrets()` scrubbed, and automatic compactions reported as
`Compaction` events through `emit` (default: the session transcript).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ctxagent.agent.events import Compaction
from ctxagent.context.assembler import ContextAssembler
from ctxagent.context.compaction import CompactionRecord
from ctxagent.context.summarizer import llm_summarizer


def compaction_event(record: CompactionRecord, reason: str | None = None) -> Compaction:
    """The loop's Compaction event for `record`, with the whole record under `details`."""
    if reason is None:
        reason = {"auto": "the request passed the compaction threshold", "manual": "requested with /compact",
                  "overflow": "the server said the context is too long"}.get(record.trigger, record.trigger)
    return Compaction(reason=reason, method=record.method, messages_before=record.messages_before,
                      messages_after=record.messages_after, details=record.to_dict())


def make_assembler(settings: Any, repo: Path, session: Any, *, client: Any = None,
                   emit: Callable[[Any], None] | None = None) -> ContextAssembler:
    """The context engine's assembler for `session` (see the module doc).

    Raises ConfigError when a `[context]` compaction setting is out of range.
    """
    sink = emit or getattr(session, "record_event", None)

    def on_compaction(record: CompactionRecord) -> None:
        if sink is not None:
            sink(compaction_event(record))

    return ContextAssembler(settings.model, context=settings.context,
                            summarize=llm_summarizer(client) if client is not None else None,
                            secrets=settings.secrets(), on_compaction=on_compaction)
