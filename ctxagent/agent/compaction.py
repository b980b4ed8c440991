"""What the loop does after a context-length error: compact the history, then retry once.

If the assembler has `compact(messages) -> messages` (the context engine's does), it is
used; otherwise `mask_tool_outputs` is the simple fallback, built on the context
engine's observation masking (`ctxagent.context.compaction.masking`): every tool output but the
newest becomes a one-line placeholder, and the newest is clipped (head and tail kept).
Either way the pairing of calls and results stays valid (docs/context.md, "Message rules").
"""

from __future__ import annotations

from typing import Any

from ctxagent.agent.events import Compaction
from ctxagent.context.compaction.compactor import CompactionRecord
from ctxagent.context.compaction.masking import mask_observations
from ctxagent.context.messages import repair_pairing, truncate_observation


def compaction_event(record: CompactionRecord, reason: str | None = None) -> Compaction:
    """The loop's Compaction event for `record`, with the whole record under `details`."""
    if reason is None:
        reason = {"auto": "the request passed the compaction threshold", "manual": "requested with /compact",
                  "overflow": "the server said the context is too long"}.get(record.trigger, record.trigger)
    return Compaction(reason=reason, method=record.method, messages_before=record.messages_before,
                      messages_after=record.messages_after, details=record.to_dict())


#: The newest tool output is clipped to this many characters.
NEWEST_MAX_CHARS = 4_000


def compact_history(assembler: Any, messages: list[dict[str, Any]], *, manual: bool = False,
                    focus: str | None = None) -> tuple[list[dict[str, Any]], str]:
    """Return (compacted messages, method). `messages` start with the system message and are not modified.

    manual: the user asked (`/compact [focus]`) rather than the server refusing the request;
    passed to the assembler as `compact(messages, focus, trigger="manual")`.
    """
    compact = getattr(assembler, "compact", None)
    if callable(compact):
        result = compact(list(messages), focus, trigger="manual") if manual else compact(list(messages))
        return repair_pairing(list(result)), "assembler"
    return mask_tool_outputs(messages), "mask"


def mask_tool_outputs(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mask every tool output but the newest (`mask_observations`), and clip the newest to
    NEWEST_MAX_CHARS characters."""
    out, _ = mask_observations(messages, keep_recent=1)
    tool_indexes = [i for i, m in enumerate(out) if m.get("role") == "tool"]
    if tool_indexes:
        newest = out[tool_indexes[-1]]
        out[tool_indexes[-1]] = {**newest, "content": truncate_observation(str(newest.get("content") or ""),
                                                                            NEWEST_MAX_CHARS)}
    return out
