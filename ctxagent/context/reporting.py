"""The assembler's per-call report (layers, token counts, one decision per history
message) and the snapshot file that records it with the exact request.

Decisions for history messages: "kept", "masked" (the content is a placeholder),
"cut" (a long tool result was cut, head and tail kept), "compacted" (replaced by a
compaction summary, now or earlier in the session) and "trimmed" (left out of this
request because it did not fit). With these, "why did the model not see X?" is one
look at `ctxagent inspect SESSION --call N`.
"""

from __future__ import annotations

from typing import Any

from ctxagent.context.masking import is_masked

_PREVIEW_CHARS = 80


def _preview(message: dict) -> str:
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    if not text and message.get("tool_calls"):
        text = "calls " + ", ".join(c.get("function", {}).get("name", "?") for c in message["tool_calls"])
    text = " ".join(text.split())
    return text if len(text) <= _PREVIEW_CHARS else text[: _PREVIEW_CHARS - 3] + "..."


def _decisions(convo, origins, fit, capped, counter, n_system) -> list[dict]:
    final = {origins[v]: fit.convo[k] for k, v in enumerate(fit.origins) if origins[v] is not None}
    trimmed = {origins[v] for v in fit.trimmed if origins[v] is not None}
    cut = {origins[v] for v in capped if origins[v] is not None}
    rows = []
    for h, message in enumerate(convo):
        sent = final.get(h)
        if sent is None:
            decision, reason = ("trimmed", "did not fit the budget") if h in trimmed else (
                "compacted", "replaced by a compaction summary")
        elif is_masked(sent) and not is_masked(message):
            decision, reason = "masked", "old tool result replaced by a placeholder"
        elif h in cut:
            decision, reason = "cut", "tool result longer than its share of the budget"
        else:
            decision, reason = "kept", ""
        rows.append({"index": n_system + h, "role": message.get("role"), "tokens": counter.count_message(message),
                     "decision": decision, "reason": reason, "preview": _preview(message)})
    return rows


def build_report(*, call: int, state: dict, budget: dict, system: list[dict], sections: list[tuple[str, str]],
                 fit: Any, tools: list[dict] | None, counter: Any, origins: list, convo: list[dict],
                 capped: list[int], record: Any, problems: list[str], n_system: int) -> dict[str, Any]:
    """The JSON-ready report of one assembled request (see the module doc)."""
    layers = {"system": counter.count_messages(system) if system else 0}
    layers.update({name: counter.count(text) for name, text in sections})
    layers["history"] = sum(counter.count_message(m) for m in fit.convo)
    layers["tools"] = counter.count_tools(tools)
    return {
        "assembler": "context",
        "call": call,
        "session_id": state.get("session_id"),
        "turn": state.get("turn"),
        "budget": budget,
        "tokens": {"total": fit.tokens, "layers": layers},
        "messages": {"history": n_system + len(convo), "sent": len(fit.messages)},
        "fit_actions": fit.actions,
        "compaction": record.to_dict() if record is not None else None,
        "problems": problems,
        "decisions": _decisions(convo, origins, fit, capped, counter, n_system),
    }


def write_request_snapshot(state: dict, call: int, messages: list[dict], tools: list[dict] | None,
                           report: dict, *, enabled: bool = True) -> str | None:
    """Write `<repo>/.ctxagent/snapshots/<session>/<call>.json` (part 1's `write_snapshot`);
    returns its path, or None when disabled or the state names no repo or session."""
    repo, session = state.get("repo"), state.get("session_id")
    if not enabled or not repo or not session:
        return None
    from pathlib import Path

    from ctxagent.storage import state_dir

    try:
        from ctxagent.context.snapshot import write_snapshot
    except ImportError:  # the snapshot module is not installed in this build
        return None

    request = {"messages": messages, "tools": tools or []}
    path = write_snapshot(state_dir(Path(repo)), session, call, request, report)
    report["snapshot"] = str(path) if path is not None else None
    return report["snapshot"]
