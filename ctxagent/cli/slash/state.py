"""`/plan GOAL`, `/todo` and `/notes`: the plan tool and the session's state, from the chat.

`/plan GOAL` runs the agent's own `plan` tool (its model calls are metered and get
snapshots like the model's own calls) and puts the steps on the todo board, where the
model sees them in every request (the state layer). `/todo` draws the board (`/todo
clear` empties it, a board carried over from an earlier session included), `/notes`
lists the notes (`/notes QUERY` searches them), as `ctxagent todo list` and `ctxagent
notes list` do.
"""

from __future__ import annotations

from typing import Any, Callable

from rich.markdown import Markdown

from ctxagent.cli.notes_cmd import draw_note_rows
from ctxagent.cli.safe_text import visible
from ctxagent.cli.slash.context import ChatContext
from ctxagent.cli.todo_cmd import draw_board
from ctxagent.cli.wrap import soft
from ctxagent.tools.notes import NoteTool
from ctxagent.tools.todo import TodoTool


def _plan(ctx: ChatContext, arg: str) -> None:
    if not arg:
        ctx.console.print("usage: /plan GOAL, e.g. /plan add a --verbose flag to the CLI", markup=False)
        return
    tool = ctx.agent.registry.get("plan")
    if tool is None:
        ctx.console.print("the plan tool is not among this agent's tools (see [agent] tools in config.toml)",
                          style="yellow", markup=False)
        return
    ctx.console.print("asking the model for a plan...", style="dim", markup=False)
    result = tool.execute({"goal": arg, "load_to_todo": True})
    if not result.ok:
        ctx.console.print(f"plan: {visible(result.content)}", style="red", markup=False, soft_wrap=soft(ctx.console))
        return
    ctx.console.print(Markdown(visible(result.content)))


def _todo(ctx: ChatContext, arg: str) -> None:
    tool = ctx.agent.registry.get("todo")
    board = getattr(tool, "board", None) or TodoTool.for_repo(ctx.repo).board
    if arg.strip() == "clear":  # drop the whole board, carried over or not (issue 15 item 4)
        removed = board.clear()
        ctx.console.print(f"removed {len(removed)} todo item(s); the board is empty", markup=False)
        return
    if arg.strip():
        ctx.console.print("usage: /todo (show the board) or /todo clear (remove every item)", markup=False)
        return
    draw_board(ctx.console, board.items())


def _notes(ctx: ChatContext, arg: str) -> None:
    tool = NoteTool.for_repo(ctx.repo)
    args = {"action": "search", "query": arg, "limit": 10} if arg else {"action": "list", "limit": 20}
    draw_note_rows(ctx.console, tool.run(args))


def register_slash_commands(register: Callable[..., Any]) -> None:
    """Register /plan, /todo and /notes."""
    register("plan", "ask the model for a step-by-step plan and put its steps on the todo board", _plan, "GOAL")
    register("todo", "show the todo board; /todo clear removes every item", _todo, "[clear]")
    register("notes", "list the notes, or search them for QUERY", _notes, "[QUERY]")
