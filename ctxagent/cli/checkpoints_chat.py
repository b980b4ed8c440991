"""Chat `/undo` and `/rewind`: the checkpoints of this session (docs/checkpoints.md).

`/undo [--force]` restores the files of this session's last change. `/rewind` lists the
turns that changed files; `/rewind T [code|conversation|both] [--force]` goes back to
just before turn T began: the files its changes and every later one touched, and the
conversation (turn T's request and everything after it dropped; the request is shown).
"""

from __future__ import annotations

from typing import Callable

from rich.markup import escape

from ctxagent.cli.restore_flow import checkpoint_table, describe, run_restore
from ctxagent.cli.safe_text import visible
from ctxagent.cli.slash import ChatContext
from ctxagent.errors import CtxAgentError
from ctxagent.exec.checkpoints import CheckpointStore
from ctxagent.exec.restore import last_change, plan_restore

_WHAT = ("code", "conversation", "both")


def register_slash_commands(register: Callable) -> None:
    """Add /undo and /rewind."""
    register("undo", "put back the files of the last change (/undo [--force])", _undo)
    register("rewind", "list turns; /rewind T [code|conversation|both] goes back to before turn T", _rewind)


def _undo(ctx: ChatContext, arg: str) -> None:
    session = ctx.agent.session
    try:
        store = CheckpointStore.for_repo(session.repo)
        cp = last_change(store, session.id)
        if cp is None:
            ctx.console.print("nothing to undo: this session has not changed any file.")
            return
        ctx.console.print(f"undo {describe(cp)}:")
        run_restore(ctx.console, store, plan_restore(store, cp, session_id=session.id), force="--force" in arg.split(),
                    session_id=session.id, turn=session.turns, tool="undo")
    except CtxAgentError as exc:
        ctx.console.print(f"[red]error:[/] {escape(visible(str(exc)))}", highlight=False)


def _rewind(ctx: ChatContext, arg: str) -> None:
    session = ctx.agent.session
    words = arg.split()
    force = "--force" in words
    words = [w for w in words if w != "--force"]
    try:
        store = CheckpointStore.for_repo(session.repo)
        mine = store.checkpoints(session.id)
        if not words:
            _list(ctx, store, mine)
            return
        if not words[0].isdigit() or (len(words) > 1 and words[1] not in _WHAT) or len(words) > 2:
            ctx.console.print(escape("usage: /rewind T [code|conversation|both] [--force]  (T: a turn number, see /rewind)"))
            return
        turn, what = int(words[0]), words[1] if len(words) > 1 else "both"
        if not 1 <= turn <= session.turns:
            ctx.console.print(f"no turn {turn} in this session (turns 1 to {session.turns})")
            return
        if what in ("code", "both"):
            target = next((c for c in mine if c.turn >= turn), None)
            if target is None:
                ctx.console.print(f"files: no change since turn {turn} began, nothing to restore")
            else:
                ctx.console.print(f"files: back to {describe(target)}:")
                if not run_restore(ctx.console, store, plan_restore(store, target, session_id=session.id), force=force,
                                   session_id=session.id, turn=session.turns, tool="rewind"):
                    return  # refused: the conversation is left as it is too
        if what in ("conversation", "both"):
            _conversation(ctx, turn)
    except CtxAgentError as exc:
        ctx.console.print(f"[red]error:[/] {escape(visible(str(exc)))}", highlight=False)


def _conversation(ctx: ChatContext, turn: int) -> None:
    from ctxagent.agent.rewind import rewind_session, turn_tasks

    session = ctx.agent.session
    task = turn_tasks(session.path).get(turn, "")
    dropped = rewind_session(session, turn)
    ctx.console.print(f"conversation: back to before turn {turn} ({dropped} message(s) dropped). Its request was:",
                      highlight=False)
    ctx.console.print(f"  {escape(visible(task))}", highlight=False)


def _list(ctx: ChatContext, store: CheckpointStore, mine: list) -> None:
    from ctxagent.agent.rewind import turn_tasks

    tasks = turn_tasks(ctx.agent.session.path)
    if not tasks:
        ctx.console.print("no turns yet")
        return
    for turn, task in sorted(tasks.items()):
        count = sum(1 for c in mine if c.turn == turn)
        first = task.strip().splitlines()[0][:70] if task.strip() else ""
        ctx.console.print(f"  turn {turn}: {escape(visible(first))}  [dim]({count} change(s))[/]", highlight=False)
    if mine:
        ctx.console.print(checkpoint_table(store, mine, ctx.console.width))
    ctx.console.print(f"[dim]{escape('/rewind T [code|conversation|both] goes back to just before turn T')}[/]")
