"""`todo`: the task board the agent keeps while it works (case S05: one item in progress).

Actions: add, update, list, remove, clear_completed, and set (alias write) which
replaces the whole board in one call, like Claude Code's TodoWrite. `run` returns data
(add/update/remove -> the item dict; list/set -> the list of item dicts;
clear_completed -> the removed item dicts); the model receives the board as plain text
(no terminal colour codes). Storage and rules: `ctxagent.todo.board`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from msgspec import Meta

from ctxagent.errors import ToolInputError
from ctxagent.storage.files import ensure_state_dir
from ctxagent.todo.board import PRIORITIES, STATUSES, TodoBoard, TodoItem, check_status
from ctxagent.tools.base import Tool, ToolParams, ToolResult

_MARK = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}


def board_path(repo: str | Path) -> Path:
    """`<repo>/.ctxagent/todos.json`, the state folder created if missing (StorageError if refused)."""
    return ensure_state_dir(Path(repo)) / "todos.json"


class TodoItemSpec(ToolParams):
    """One item of a `set` request."""

    id: Annotated[int | None, Meta(description="keep this id (omit for a new item)")] = None
    content: Annotated[str | None, Meta(description="what is to be done, one short imperative line")] = None
    title: Annotated[str | None, Meta(description="same as content (HelloCodeAgentCli's name)")] = None
    desc: Annotated[str | None, Meta(description="optional detail, appended to the text")] = None
    status: Annotated[str, Meta(description=" | ".join(STATUSES))] = "pending"
    priority: Annotated[str | None, Meta(description=" | ".join(PRIORITIES))] = None


class TodoParams(ToolParams):
    """Arguments of the `todo` tool."""

    action: Annotated[Literal["add", "update", "list", "remove", "clear_completed", "set", "write"], Meta(
        description="add | update | list | remove | clear_completed | set (replace the whole board)")]
    id: Annotated[int | None, Meta(description="item id (update, remove)")] = None
    content: Annotated[str | None, Meta(description="item text (add; update)")] = None
    title: Annotated[str | None, Meta(description="same as content (HelloCodeAgentCli's name)")] = None
    desc: Annotated[str | None, Meta(description="optional detail, appended to the item text")] = None
    status: Annotated[str | None, Meta(description=f"{' | '.join(STATUSES)}; at most one item in_progress "
                                       "(add, default pending; update; filter for list)")] = None
    priority: Annotated[str | None, Meta(description=f"{' | '.join(PRIORITIES)} (add; update)")] = None
    items: Annotated[list[TodoItemSpec] | None, Meta(description="the whole board (set)")] = None


class TodoTool(Tool):
    """The todo board of repository `workspace` (`<workspace>/.ctxagent/todos.json`), or the
    board file `path` when given (path wins)."""

    name = "todo"
    description = (
        "Track the steps of a multi-step task: add items, mark exactly one in_progress while "
        "you work on it, mark it completed when done, list the board to see what is left."
    )
    Params = TodoParams
    writes_state = True

    def __init__(self, path: str | Path | None = None, *, workspace: str | Path = ".",
                 session_id: str | None = None) -> None:
        self.board = TodoBoard(path if path is not None else board_path(workspace), session_id=session_id)

    @classmethod
    def for_repo(cls, repo: str | Path, settings: Any = None, *, session_id: str | None = None,
                 client: Any = None) -> TodoTool:
        """The tool over `<repo>/.ctxagent/todos.json` (docs/state.md); items it changes are
        stamped with `session_id`."""
        return cls(workspace=repo, session_id=session_id)

    def _run(self, params: TodoParams) -> ToolResult:
        action = "set" if params.action == "write" else params.action
        return getattr(self, f"_{action}")(params)

    def _add(self, p: TodoParams) -> ToolResult:
        item = self.board.add(item_text(p.content, p.title, p.desc) or "", status=p.status or "pending",
                              priority=p.priority)
        return self._answer(f"added item {item.id}", item.to_dict())

    def _update(self, p: TodoParams) -> ToolResult:
        item = self.board.update(_need_id(p), content=item_text(p.content, p.title, p.desc), status=p.status,
                                 priority=p.priority)
        return self._answer(f"updated item {item.id}", item.to_dict())

    def _remove(self, p: TodoParams) -> ToolResult:
        item = self.board.remove(_need_id(p))
        return self._answer(f"removed item {item.id}", item.to_dict())

    def _clear_completed(self, p: TodoParams) -> ToolResult:
        done = self.board.clear_completed()
        return self._answer(f"removed {len(done)} completed items", [i.to_dict() for i in done])

    def _set(self, p: TodoParams) -> ToolResult:
        specs = [{"id": s.id, "content": item_text(s.content, s.title, s.desc) or "", "status": s.status,
                  "priority": s.priority} for s in (p.items or [])]
        items = self.board.replace(specs)
        return self._answer(f"board replaced ({len(items)} items)", [i.to_dict() for i in items])

    def _list(self, p: TodoParams) -> ToolResult:
        if p.status is not None:
            check_status(p.status)
        items = self.board.items()
        shown = [i for i in items if p.status is None or i.status == p.status]
        return ToolResult(True, render_board(items, only=p.status), [i.to_dict() for i in shown])

    def _answer(self, what: str, data: Any) -> ToolResult:
        return ToolResult(True, f"{what}\n{render_board(self.board.items())}", data)


def item_text(content: str | None, title: str | None, desc: str | None) -> str | None:
    """An item's text from `content`, else HelloCodeAgentCli's `title`, with `desc` after
    " - " when given; None when all are missing (an update that leaves the text alone)."""
    head = content if content and content.strip() else title
    if desc and desc.strip():
        return f"{head.strip()} - {desc.strip()}" if head and head.strip() else desc
    return head


def _need_id(p: TodoParams) -> int:
    if p.id is None:
        raise ToolInputError(f"{p.action} needs the id of a todo item; use list to see ids")
    return p.id


def render_board(items: list[TodoItem], *, only: str | None = None) -> str:
    """The board as plain text for the model: a count line, then `[x] 3 text (priority)` rows.

    Marks: `[ ]` pending, `[>]` in progress, `[x]` completed. `only` keeps one status.
    """
    if not items:
        return "todo board is empty"
    done = sum(1 for i in items if i.status == "completed")
    lines = [f"todo board: {done}/{len(items)} completed"]
    for item in items:
        if only is not None and item.status != only:
            continue
        extra = " (in progress)" if item.status == "in_progress" else ""
        extra += f" !{item.priority}" if item.priority else ""
        lines.append(f"{_MARK[item.status]} {item.id} {' '.join(item.content.split())}{extra}")
    return "\n".join(lines)
