"""The context engine's chat commands: `/compact [focus]` and `/context`.

Registered through `ctxagent.cli.slash.SLASH_MODULES` (`register(name, help, handler, args)`).
`compact_command(agent, focus)`
and `context_command(agent)` are the library calls (usable without a terminal); the
handlers render their results with rich.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ctxagent.agent.loop import Agent
    from ctxagent.cli.slash import ChatContext


def compact_command(agent: "Agent", focus: str | None) -> dict[str, Any]:
    """Compact the agent's history now, keeping `focus` above all; returns
    {"event": Compaction event, "record": CompactionRecord or None (None when the agent's
    assembler is not the context engine's)}; both None when there was nothing to compact (a
    Notice then said so: "nothing to compact: 12% of the window")."""
    event = agent.compact("requested with /compact", manual=True, focus=(focus or "").strip() or None)
    return {"event": event, "record": getattr(agent.assembler, "last_record", None) if event else None}


def next_call_state(agent: "Agent") -> dict[str, Any]:
    """The `state` the loop would pass for the next model call (a new turn)."""
    model = agent.settings.model
    users = [m for m in agent.session.history if m.get("role") == "user"]
    task = users[-1].get("content") if users else ""
    return {"session_id": agent.session.id, "turn": agent.session.turns + 1, "step": 0,
            "call_index": agent.model_calls + 1, "task": task if isinstance(task, str) else "",
            "repo": str(agent.session.repo), "model": model.model, "context_window": model.context_window,
            "max_output_tokens": model.max_output_tokens}


def context_command(agent: "Agent") -> dict[str, Any] | None:
    """The report of what the next call would send (layers, packets), without sending or
    changing anything; None when the agent's assembler cannot preview."""
    preview = getattr(agent.assembler, "preview", None)
    if not callable(preview):
        return None
    messages = [{"role": "system", "content": agent.system}, *agent.session.history]
    return preview(messages, agent.registry.schemas(), next_call_state(agent)).report


def _compact(ctx: "ChatContext", arg: str) -> None:
    compact_command(ctx.agent, arg)  # the chat's renderer shows the Compaction event: one line, with the tokens


def _context(ctx: "ChatContext", arg: str) -> None:
    from rich.markup import escape

    from ctxagent.cli.context_cmd import draw_report, filter_packets, transcript_mentions
    from ctxagent.storage.files import state_dir

    report = context_command(ctx.agent)
    if report is None:
        ctx.console.print("[yellow]this agent's assembler cannot preview the next call[/]")
        return
    if arg:
        said = transcript_mentions(state_dir(ctx.agent.session.repo), ctx.agent.session.id, arg)
        report = {**report, "packets": filter_packets(report.get("packets", []), arg, said)}
    draw_report(ctx.console, report, title="next model call")
    line = compaction_line(report)
    if line:
        ctx.console.print(f"[yellow]{escape(line)}[/]")


def compaction_line(report: dict) -> str | None:
    """What /context says when the next call compacts the history: with a model summary,
    that the summary shown is the preview's stand-in (`ContextAssembler.preview`)."""
    compaction = report.get("compaction")
    if not isinstance(compaction, dict):
        return None
    stand_in = compaction.get("stand_in")
    if isinstance(stand_in, dict):
        return f"note: {stand_in.get('note')}"
    return (f"note: the next call compacts the history ({compaction.get('method')}, "
            f"{compaction.get('tokens_before')} to {compaction.get('tokens_after')} tokens), without a model call")


def register_slash_commands(register: Callable[..., None]) -> None:
    """Register /compact and /context (replacing the chat's simple defaults)."""
    register("compact", "compact the conversation now, keeping FOCUS above all", _compact, "[FOCUS]")
    register("context", "what the next model call would hold, per layer with tokens; TEXT filters", _context, "[TEXT]")
