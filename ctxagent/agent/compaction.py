"""What the loop does after a context-length error: compact the history, then retry once.

If the assembler has `compact(messages) -> messages` (the context engine's does), it is
used; otherwise `mask_tool_outputs` is the simple fallback: old tool outputs are
replaced by a short marker and the newest one is clipped. Either way the pairing of
calls and results stays valid (DESIGN.md section 5).
"""

from __future__ import annotations

from typing import Any

from ctxagent.agent.pairing import repair_pairing
from ctxagent.context.messages import truncate_observation

#: Replaces an old tool output when the fallback masking runs.
MASKED = "[output removed to fit the context window; run the call again if you need it]"
#: Outputs this short are left alone (masking them saves nothing).
KEEP_CHARS = 300
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
    """Mask every tool output but the newest, and clip the newest to NEWEST_MAX_CHARS characters."""
    tool_indexes = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
    out = [dict(m) for m in messages]
    for index in tool_indexes:
        content = str(out[index].get("content") or "")
        if index == tool_indexes[-1]:
            out[index]["content"] = truncate_observation(content, NEWEST_MAX_CHARS)
        elif len(content) > KEEP_CHARS:
            out[index]["content"] = MASKED
    return out
