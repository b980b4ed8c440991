"""`ctxagent context QUERY` and `ctxagent inspect SESSION`: see what a model call sees, and why.

`context` builds a context without calling a model (the repository's files ranked by
context_fetch among its sources: `ctxagent.cli.context_files`); `inspect` draws a past call's
snapshot (`.ctxagent/snapshots/<session>/<n>.json`): layers, packet decisions, side
calls; `--grep TEXT` says why TEXT was or was not seen (docs/context.md, "Seeing a context").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from ctxagent.cli.context_files import SOURCE, file_packets
from ctxagent.cli.report_view import draw_report
from ctxagent.cli.safe_text import markup
from ctxagent.cli.workspace import repo_option
from ctxagent.context import ContextBuilder, ContextConfig, TokenCounter
from ctxagent.context.gather import repo_sources
from ctxagent.context.messages import content_text
from ctxagent.context.record.report import message_preview
from ctxagent.context.record.snapshot import (
    REDACTED,
    list_calls,
    list_sessions,
    read_snapshot,
    resolve_session,
    side_calls_for,
    side_calls_in,
    side_kind,
    summary_calls_in,
)
from ctxagent.storage.files import read_jsonl, state_dir


def register(cli: click.Group) -> None:
    """Add `context` and `inspect` to `cli`."""
    cli.add_command(context_command)
    cli.add_command(inspect_command)


def _open_memory_tool(repo: Path) -> object:
    """The memory source of `ctxagent context` (imported here: an optional part). Looking creates
    no `.ctxagent/` (issue 16): without a memory.db the source is reported as absent."""
    from ctxagent.tools.memory import MemoryTool

    if not (state_dir(repo) / "memory.db").is_file():
        raise FileNotFoundError("no memory yet (.ctxagent/memory.db)")

    return MemoryTool.for_repo(repo)


@click.command("context")
@click.argument("query")
@repo_option
@click.option("--max-tokens", type=click.IntRange(64, 10**8), default=None, help="window size in tokens (default: configured context_window, else 8000)")
@click.option("--model", default=None, help="model whose tokenizer counts (default: the configured model)")
@click.option("--messages", "as_messages", is_flag=True, help="show the chat messages instead of the sectioned text")
@click.option("--json", "as_json", is_flag=True, help="print context, report (and messages) as JSON")
def context_command(query: str, repo: str, max_tokens: int | None, model: str | None, as_messages: bool, as_json: bool) -> None:
    """Build and print the context for QUERY, with its budget and packet decisions (no model call)."""
    if not query.strip():
        raise click.BadParameter("the query is empty; ask what the model would be asked, e.g. "
                                 "ctxagent context \"how is the config parsed?\"", param_hint="QUERY")
    model, window = _model_and_window(Path(repo), model, max_tokens)
    found = repo_sources(Path(repo), query, memory_tool=_open_memory_tool)
    files, found.sources[SOURCE] = file_packets(Path(repo), query)  # the code context_fetch would show
    found.packets.extend(files)
    builder = ContextBuilder(memory_tool=found.memory_tool, config=ContextConfig(max_tokens=window), counter=TokenCounter(model))
    args = dict(user_query=query, system_instructions=found.instructions, custom_packets=found.packets)
    if as_messages:
        output, report = builder.build_messages(**args)
    else:
        output = builder.build(**args)
        report = builder.last_report or {}
    report["sources"] = {**found.sources, **report["sources"]}
    if as_json:
        click.echo(json.dumps({"messages" if as_messages else "context": output, "report": report}, ensure_ascii=False, indent=1))
        return
    console = Console()
    console.rule("context")
    console.print(markup(output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, indent=1)))
    draw_report(console, report, title=f"{model or 'estimated tokens'}: {query[:60]}")


def _model_and_window(repo: Path, model: str | None, max_tokens: int | None) -> tuple[str | None, int]:
    """The model name and window from flags, else the configured model, else (None, 8000).
    A configuration that is there but wrong is a ConfigError (as for `run`), not ignored."""
    from ctxagent.config.settings import load_settings

    settings = load_settings(repo, require_key=False, require_model=False).model
    configured, window = (None if settings.model == "(none)" else settings.model), settings.context_window
    return model or configured, max_tokens or window


@click.command("inspect")
@click.argument("session", default="last")
@click.option("--call", "call", type=click.IntRange(0), default=None, help="model call number (default: the last)")
@repo_option
@click.option("--grep", "grep", default=None, help="show only packets mentioning TEXT, whether the request contains it, and the plan and summary calls sent it")
@click.option("--json", "as_json", is_flag=True, help="print the snapshot as JSON")
def inspect_command(session: str, call: int | None, repo: str, grep: str | None, as_json: bool) -> None:
    """Show what model call N of SESSION ("last" = newest) was sent: layers, budget, packet decisions."""
    root = state_dir(Path(repo))
    snap = read_snapshot(root, session, call)
    session_id = resolve_session(root, session)
    kind, number = side_kind(snap), snap.get("call")
    report = snap.get("report") or {}
    side = side_calls_for(root, session_id, number) if not kind and isinstance(number, int) else []  # for its tool calls
    sent = []  # the session's other side calls whose request mentions `grep`
    kept = []  # the summary calls kept in main calls' snapshots whose request mentions it
    if grep:
        history = [r.get("preview") for r in report.get("packets", []) if str(r.get("id", "")).startswith("msg")]
        said = transcript_mentions(root, session_id, grep, until=history)
        sent_whole = request_message_mentions(snap.get("request") or {}, grep)
        report = {**report, "packets": filter_packets(report.get("packets", []), grep, said | sent_whole)}
        sent = [c for c in side_calls_in(root, session_id)
                if c.get("call") != number and request_mentions(c.get("request") or {}, grep)]
        kept = [c for c in summary_calls_in(root, session_id)
                if isinstance(c.get("request"), dict) and request_mentions(c["request"], grep)]
    children = [(c, len(list_calls(root, c))) for c in list_sessions(root) if c.startswith(f"{session_id}.")]
    if as_json:
        payload = {**snap} if kind else {**snap, "report": report}
        if children:
            payload["subagents"] = [{"session": c, "calls": n} for c, n in children]
        if side:
            payload["side_calls"] = [side_call_summary(c) for c in side]
        if grep:
            payload["grep"] = {"text": grep, "in_request": request_mentions(snap.get("request", {}), grep),
                               "in_side_calls": [c.get("call") for c in sent],
                               "in_summary_calls": [{k: c.get(k) for k in ("call", "index", "trigger")} for c in kept]}
        click.echo(json.dumps(payload, ensure_ascii=False, indent=1))
        return
    console = Console()
    calls = list_calls(root, session_id)
    console.print(f"[bold]session[/] {markup(session_id)}  [bold]call[/] {snap.get('call')} of {calls[0]}..{calls[-1]}"
                  f"  [dim]{markup(str(snap.get('created_at', '')))}[/]")
    if kind:
        for line in side_call_lines(snap, session_id):
            console.print(line, soft_wrap=True)
        if grep:
            seen = request_mentions(snap.get("request", {}), grep)
            verdict = "[green]appears[/]" if seen else "[red]does not appear[/]"
            console.print(f"{markup(grep)!s} {verdict} in the request sent to the model ({markup(kind)} call).",
                          soft_wrap=True)
            for line in sent_lines(sent, session_id, grep) + kept_lines(kept, session_id, grep, number):
                console.print(line, soft_wrap=True)
        return
    for line in snapshot_lines(snap):
        console.print(line, soft_wrap=True)
    for other in side:
        console.print(markup(side_call_line(other, this_call=True)), soft_wrap=True)
    draw_report(console, report, title=str(report.get("query", ""))[:80])
    for child, n in children:
        console.print(f"sub-agent {markup(child)}: {n} call(s); see `ctxagent inspect {markup(child)}`", soft_wrap=True)
    if grep:
        seen = request_mentions(snap.get("request", {}), grep)
        verdict = "[green]appears[/]" if seen else "[red]does not appear[/]"
        console.print(f"{markup(grep)!s} {verdict} in the request sent to the model; {len(report['packets'])} packet(s) mention it.")
        for line in sent_lines(sent, session_id, grep) + kept_lines(kept, session_id, grep, number):
            console.print(line, soft_wrap=True)
        rows = {r.get("preview") for r in report["packets"] if str(r.get("id", "")).startswith("msg")}
        gone = len(said - rows)
        if gone:
            console.print(f"{gone} earlier message(s) of the session mention it but were no longer in its history: "
                          "compacted away (with /compact or after a context-length error); the compaction "
                          "events in the transcript say what each kept.")
        for line in why_lines(report["packets"]):
            console.print(markup(line), soft_wrap=True)


#: Request keys that are not parameters: shown by the layers and packets, not in the parameter line.
_NOT_PARAMETERS = ("model", "messages", "tools")


def snapshot_lines(snap: dict) -> list[str]:
    """Rich-markup lines on what a snapshot holds beside its report: the request's
    parameters, whether secrets were replaced, and each compaction-summary call."""
    request = snap.get("request") or {}
    params = " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in request.items()
                      if k not in _NOT_PARAMETERS)
    lines = [f"[bold]request[/] model {markup(str(request.get('model')))}" + (f", {markup(params)}" if params else "")]
    protocol = (snap.get("report") or {}).get("protocol")
    if protocol:  # a text protocol: the request is the history as text; the packets are its native-form units
        lines.append(f"[bold]protocol[/] {markup(str(protocol))}: the history was sent as text, no tools "
                     "parameter; each action and its observation is one packet pair below (docs/protocols.md)")
    if snap.get("redacted"):
        lines.append(f"[yellow]secrets in this snapshot were replaced by {markup(REDACTED)}[/]")
    for call in snap.get("summary_calls") or []:
        sent = call.get("request") if isinstance(call.get("request"), dict) else {}
        messages = sent.get("messages") if isinstance(sent.get("messages"), list) else []
        line = (f"compaction summary call ({call.get('trigger', '?')}): {len(messages)} messages, "
                f"{call.get('tokens', '?')} tokens")
        if call.get("error"):
            line += f", failed: {call['error']}"
        elif isinstance(call.get("usage"), dict):
            line += f", usage {_usage_text(call['usage'])}"
        lines.append(markup(line))
    return lines


def side_call_summary(snap: dict) -> dict:
    """A side call's snapshot without its request: call, kind, made_for, tokens, usage, error."""
    keys = ("call", "kind", "made_for", "tokens", "usage", "error")
    return {k: snap[k] for k in keys if k in snap}


def side_call_line(snap: dict, *, this_call: bool = False) -> str:
    """One plain line on a side call: `plan call 3, made for call 2's tool call c1 (attempt 1):
    1 message, 118 tokens, usage 4000 prompt + 300 completion tokens`."""
    request = snap.get("request") if isinstance(snap.get("request"), dict) else {}
    messages = request.get("messages") if isinstance(request.get("messages"), list) else []
    line = f"{_side_call_name(snap, this_call=this_call)}: {len(messages)} message(s), {snap.get('tokens', '?')} tokens"
    if snap.get("error"):
        return f"{line}, failed: {snap['error']}"
    return f"{line}, usage {_usage_text(snap.get('usage'))}"


def _side_call_name(snap: dict, *, this_call: bool = False) -> str:
    made = snap.get("made_for") if isinstance(snap.get("made_for"), dict) else {}
    if snap.get("kind") == "summary":
        after = "this call" if this_call else ("this process's first call" if made.get("call") is None
                                               else f"call {made['call']}")
        return f"summary call {snap.get('call', '?')}, made " + _summary_cause(made, after)
    owner = "this call's" if this_call else f"call {made.get('call', '?')}'s"
    return (f"{snap.get('kind', '?')} call {snap.get('call', '?')}, made for {owner} tool call "
            f"{made.get('tool_call_id') or '?'} (attempt {made.get('attempt', '?')})")


def _summary_cause(made: dict, after: str) -> str:
    """Why a summary call (its `made_for`) was made, relative to the main call `after`
    ("call 3", "this call"): `by /compact after call 3`, `after the server refused call 3
    as too long`, `for a request after call 3 that could not then be built`."""
    trigger = made.get("trigger")
    if trigger == "manual":
        before = after == "this process's first call"
        return f"by /compact {'before' if before else 'after'} {after}"
    if trigger == "overflow":
        return f"after the server refused {after} as too long"
    return f"by an automatic compaction for a request after {after} that could not then be built"


def _usage_text(usage: Any) -> str:
    if not isinstance(usage, dict):
        return "not reported"
    text = f"{usage.get('prompt_tokens', 0)} prompt + {usage.get('completion_tokens', 0)} completion tokens"
    return text + (f", ${usage['cost_usd']:.4f}" if isinstance(usage.get("cost_usd"), (int, float)) else "")


def side_call_lines(snap: dict, session_id: str) -> list[str]:
    """Rich-markup lines for a side call's snapshot (a tool's own model call, e.g. the plan
    tool's): who made it and for which call, the request's parameters, its usage, and one
    line per message sent (the whole request: `--json`)."""
    kind, made = str(snap.get("kind")), snap.get("made_for") if isinstance(snap.get("made_for"), dict) else {}
    if kind == "summary":
        return summary_call_lines(snap, session_id)
    tool_call = markup(str(made.get("tool_call_id") or "?"))
    lines = [f"[bold]{markup(kind)} call[/]: made by the {markup(kind)} tool while running tool call {tool_call} "
             f"of call {made.get('call', '?')} (turn {made.get('turn', '?')}, step {made.get('step', '?')}), "
             f"attempt {made.get('attempt', '?')}",
             *snapshot_lines(snap)]
    return lines + request_lines(snap, session_id, f"[dim]no layers or packets: the {markup(kind)} tool wrote this "
                                 f"request itself, and its answer reached the model as the result of tool call {tool_call}[/]")


def summary_call_lines(snap: dict, session_id: str) -> list[str]:
    """Rich-markup lines for a compaction-summary call's own snapshot (kind "summary"):
    why it was made and after which call, the request's parameters, its usage, and one
    line per message sent (the whole request: `--json`)."""
    made = snap.get("made_for") if isinstance(snap.get("made_for"), dict) else {}
    after = "this process's first call" if made.get("call") is None else f"call {made['call']}"
    where = f"turn {made.get('turn', '?')}, step {made.get('step', '?')}"
    head = f"[bold]summary call[/]: a compaction summary asked for {markup(_summary_cause(made, after))}"
    if made.get("trigger") == "auto":
        head += f" ({where}): {markup(str(made.get('unsent') or '?'))}"
    elif made.get("call") is not None:
        head += f" ({where})"
    if made.get("focus"):
        head += f"; focus: {markup(str(made['focus']))}"
    return [head, *snapshot_lines(snap), *request_lines(
        snap, session_id, "[dim]no layers or packets: the compaction wrote this request itself (the messages it replaced, "
        "as a transcript), and the summary took their place in the history (the compaction event in the session's "
        "transcript says what it kept)[/]")]


def request_lines(snap: dict, session_id: str, note: str) -> list[str]:
    """Rich-markup lines on a side call's request: what was sent and its usage or error,
    `note` (why it has no layers or packets), one line per message, and the command that
    shows the whole request."""
    request = snap.get("request") if isinstance(snap.get("request"), dict) else {}
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    outcome = f"[red]failed: {markup(str(snap['error']))}[/]" if snap.get("error") else \
        f"usage {markup(_usage_text(snap.get('usage')))}"
    return [f"sent {len(messages)} message(s), {snap.get('tokens', '?')} tokens; {outcome}", note,
            *(f"  {markup(str(m.get('role', '?')))}: {markup(message_preview(m))}" for m in messages),
            f"[dim]the whole request: ctxagent inspect {markup(session_id)} --call {snap.get('call')} --json[/]"]


def sent_lines(sent: list[dict], session_id: str, text: str) -> list[str]:
    """Rich-markup lines naming the side calls (`sent`) whose request mentions `text`."""
    return [markup(f"{text} appears in the request of {_side_call_name(c)}: "
                   f"ctxagent inspect {session_id} --call {c.get('call')}") for c in sent]


def kept_lines(kept: list[dict], session_id: str, text: str, number: Any = None) -> list[str]:
    """Rich-markup lines naming the summary calls kept in a main call's snapshot (`kept`:
    `summary_calls_in` entries) whose request mentions `text`; `number`: the call shown."""
    lines = []
    for c in kept:
        owner = "this call's snapshot" if c.get("call") == number else f"the snapshot of call {c.get('call')}"
        lines.append(markup(f"{text} appears in the request of compaction summary call {int(c.get('index', 0)) + 1} "
                            f"({c.get('trigger', '?')}) kept in {owner}: ctxagent inspect {session_id} --call "
                            f"{c.get('call')} --json (its summary_calls)"))
    return lines


def filter_packets(rows: list[dict], text: str, said: frozenset[str] | set[str] = frozenset()) -> list[dict]:
    """Packet rows whose id, source, reason, preview, type or title mention `text`
    (case-insensitive), and the history and summary rows whose preview is in `said` (the
    previews of the messages that mention it anywhere: in the transcript,
    `transcript_mentions`, or in the request, `request_message_mentions`; a row's preview
    is only the start of its message)."""
    needle = text.lower()
    keys = ("id", "source", "reason", "preview", "type", "title")
    return [r for r in rows if any(needle in str(r.get(k, "")).lower() for k in keys)
            or (str(r.get("id", "")).startswith(("msg", "summary")) and r.get("preview") in said)]


def request_message_mentions(request: dict, text: str) -> set[str]:
    """The report previews of the request's messages that mention `text` (case-insensitive)
    in their whole content or tool-call arguments: a history or summary row whose preview
    stops before the text was still sent it."""
    needle = text.lower()
    return {message_preview(m) for m in request.get("messages") or [] if isinstance(m, dict)
            and needle in _message_text(m).lower()}


def transcript_mentions(root: Path, session_id: str, text: str, until: list[str] | None = None) -> set[str]:
    """The report previews (`reporting.message_preview`) of the messages of session `session_id`'s transcript
    that mention `text` (case-insensitive) in their content or tool-call arguments; empty without a transcript.

    `until`: the previews of a call's history rows, in order; then only the messages in that call's history
    are searched (docs/context.md, "Seeing a context", how `--grep` finds them)."""
    path = root / "sessions" / f"{session_id}.jsonl"
    if not path.is_file():
        return set()
    needle = text.lower()
    found, history, before = set(), [], set()
    for record in read_jsonl(path):
        kind = record.get("kind")
        if kind == "history" and isinstance(record.get("messages"), list):
            history = [message_preview(m) for m in record["messages"] if isinstance(m, dict)]
        message = record.get("message") if kind == "message" else None
        if isinstance(message, dict):
            history.append(message_preview(message))
            if needle in _message_text(message).lower():
                found.add(message_preview(message))
        if until is not None and kind in ("history", "message") and history == until:
            before = set(found)
            break
    else:
        before = found
    return before


def _message_text(message: dict) -> str:
    calls = [c.get("function") or {} for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    return " ".join([content_text(message), *(f"{f.get('name', '')} {f.get('arguments', '')}" for f in calls)])


def why_lines(rows: list[dict]) -> list[str]:
    """One line per packet row, whole at any terminal width: `id (title): decision: reason`."""
    lines = []
    for r in rows:
        title = f" ({r['title']})" if r.get("title") else ""
        lines.append(f"  {r.get('id', '?')}{title}: {r.get('decision', '?')}: {r.get('reason', '')}")
    return lines


def request_mentions(request: dict, text: str) -> bool:
    """True if `text` occurs (case-insensitive) anywhere in the request's messages."""
    return text.lower() in json.dumps(request.get("messages", request), ensure_ascii=False).lower()
