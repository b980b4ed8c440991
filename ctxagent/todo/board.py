"""`TodoBoard`: the task board in `<repo>/.ctxagent/todos.json` (with a `.bak` copy).

Items {id, content, status, priority, created_at, updated_at, session} (`session`: the
session that last changed it, "" outside one), ids never reused; at most one in progress
(case S05). Every change is a read-modify-write under `file_lock`; a corrupt file falls
back to `.bak` with a warning and is rewritten (cases S01a, breaker F12;
docs/notes-todo-plan.md).
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from ctxagent.errors import NotFoundError, ToolInputError
from ctxagent.notes.files import sweep_stale_temp_files
from ctxagent.notes.model import now_iso
from ctxagent.redaction import redact
from ctxagent.storage.files import TMP_PREFIX, file_lock, read_json_with_fallback, write_json_with_backup

STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed")
PRIORITIES: tuple[str, ...] = ("high", "medium", "low")
BOARD_VERSION = 1
#: Longest accepted item text, in characters.
MAX_CONTENT_CHARS = 2000


@dataclass
class TodoItem:
    """One board item. Timestamps are ISO 8601 strings with the local UTC offset."""

    id: int
    content: str
    status: str = "pending"
    priority: str | None = None
    created_at: str = ""
    updated_at: str = ""
    session: str = ""

    def to_dict(self) -> dict[str, Any]:
        """{id, content, status, priority, created_at, updated_at, session}."""
        return asdict(self)


@dataclass
class _Board:
    next_id: int
    items: list[TodoItem]

    def find(self, item_id: Any) -> TodoItem:
        """The item with id `item_id`; NotFoundError listing the ids on the board."""
        wanted = check_id(item_id)
        for item in self.items:
            if item.id == wanted:
                return item
        known = ", ".join(str(i.id) for i in self.items) or "none"
        raise NotFoundError(f"no todo item {wanted} (ids on the board: {known}); use list")

    def new_id(self) -> int:
        """A fresh id, above every id this board has used."""
        self.next_id = max([self.next_id, *(i.id + 1 for i in self.items)])
        self.next_id += 1
        return self.next_id - 1


def check_id(item_id: Any) -> int:
    """`item_id` as a positive int (accepts "3"); ToolInputError otherwise."""
    try:
        value = int(str(item_id).strip().lstrip("#"))
    except (TypeError, ValueError):
        raise ToolInputError(f"todo id must be a number such as 3, got {item_id!r}") from None
    if value < 1:
        raise ToolInputError(f"todo id must be 1 or more, got {value}")
    return value


def check_status(status: Any) -> str:
    """`status` if allowed; ToolInputError listing the allowed values otherwise."""
    if status not in STATUSES:
        raise ToolInputError(f"unknown status {status!r}; use one of: {', '.join(STATUSES)}")
    return status


def check_priority(priority: Any) -> str | None:
    """`priority` if None or allowed; ToolInputError listing the allowed values otherwise."""
    if priority is not None and priority not in PRIORITIES:
        raise ToolInputError(f"unknown priority {priority!r}; use one of: {', '.join(PRIORITIES)}")
    return priority


def check_content(content: Any) -> str:
    """`content` stripped, API-key-shaped strings replaced (`ctxagent.redaction`: the board
    is stored state); ToolInputError if blank, too long or not a string."""
    if not isinstance(content, str) or not content.strip():
        raise ToolInputError("todo content is required: say what is to be done")
    content = content.strip()
    if len(content) > MAX_CONTENT_CHARS:
        raise ToolInputError(f"todo content is {len(content)} characters; keep it under {MAX_CONTENT_CHARS}")
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolInputError("todo content holds characters that are not valid Unicode text") from None
    return redact(content)


def check_one_in_progress(items: Iterable[TodoItem]) -> None:
    """Raise ToolInputError naming the ids if more than one item is in progress (S05)."""
    busy = [item.id for item in items if item.status == "in_progress"]
    if len(busy) > 1:
        ids = " and ".join(str(i) for i in busy) if len(busy) == 2 else ", ".join(map(str, busy))
        raise ToolInputError(
            f"only one todo item may be in_progress, but items {ids} would be; "
            "keep one in_progress and set the others to pending or completed. "
            "The board was not changed."
        )


class TodoBoard:
    """The board stored at `path` (a JSON file; its folder is created on first write); items
    changed through it are stamped with `session_id` (the agent's session, if any)."""

    def __init__(self, path: str | Path, *, session_id: str | None = None) -> None:
        self.path = Path(path)
        self.session_id = session_id or ""

    def items(self) -> list[TodoItem]:
        """Every item, in board order."""
        return self._load().items

    def add(self, content: str, *, status: str = "pending", priority: str | None = None) -> TodoItem:
        """Append an item; return it. Raises ToolInputError (bad field, second in_progress)."""
        return self.add_many([{"content": content, "status": status, "priority": priority}])[0]

    def add_many(self, specs: list[dict[str, Any]]) -> list[TodoItem]:
        """Append several items ({content, status?, priority?}) in one write; return them."""
        checked = [_checked_spec(spec) for spec in specs]

        def change(board: _Board) -> list[TodoItem]:
            stamp = now_iso()
            new = [TodoItem(board.new_id(), c, s, p, stamp, stamp, self.session_id) for c, s, p in checked]
            board.items.extend(new)
            return new

        return self._mutate(change)

    def update(self, item_id: Any, *, content: str | None = None, status: str | None = None,
               priority: str | None = None) -> TodoItem:
        """Change fields of item `item_id`; return it. NotFoundError, ToolInputError."""
        if content is None and status is None and priority is None:
            raise ToolInputError("nothing to update: pass content, status or priority")
        content = None if content is None else check_content(content)
        status = None if status is None else check_status(status)
        priority = check_priority(priority)

        def change(board: _Board) -> TodoItem:
            item = board.find(item_id)
            item.content = content if content is not None else item.content
            item.status = status if status is not None else item.status
            item.priority = priority if priority is not None else item.priority
            item.updated_at, item.session = now_iso(), self.session_id or item.session
            return item

        return self._mutate(change)

    def remove(self, item_id: Any) -> TodoItem:
        """Remove item `item_id` and return it. NotFoundError if absent."""

        def change(board: _Board) -> TodoItem:
            item = board.find(item_id)
            board.items.remove(item)
            return item

        return self._mutate(change)

    def clear(self) -> list[TodoItem]:
        """Remove every item (the whole board); return the removed ones. Ids are not reused."""

        def change(board: _Board) -> list[TodoItem]:
            removed, board.items = board.items, []
            return removed

        return self._mutate(change)

    def clear_completed(self) -> list[TodoItem]:
        """Remove every completed item; return the removed ones."""

        def change(board: _Board) -> list[TodoItem]:
            done = [i for i in board.items if i.status == "completed"]
            board.items = [i for i in board.items if i.status != "completed"]
            return done

        return self._mutate(change)

    def replace(self, specs: list[dict[str, Any]]) -> list[TodoItem]:
        """Make the board exactly `specs` ({id?, content, status?, priority?}), like TodoWrite.

        An item with the id of an existing item keeps its creation time; items without
        an id get new ids. Raises ToolInputError (duplicate id, bad field, two in_progress).
        """
        checked = [(_spec_id(spec), *_checked_spec(spec)) for spec in specs]
        _no_duplicate_ids([i for i, *_ in checked if i is not None])

        def change(board: _Board) -> list[TodoItem]:
            old = {item.id: item for item in board.items}
            board.next_id = max([board.next_id, *(i + 1 for i, *_ in checked if i is not None)])
            stamp = now_iso()
            board.items = [_replacement(old.get(i), i or board.new_id(), c, s, p, stamp, self.session_id)
                           for i, c, s, p in checked]
            return list(board.items)

        return self._mutate(change)

    # -- storage -----------------------------------------------------------------

    def _load(self) -> _Board:
        return read_json_with_fallback(self.path, _empty, validate=_parse)

    def _mutate(self, change: Callable[[_Board], Any]) -> Any:
        with file_lock(self.path):
            board = self._load()
            result = change(board)
            check_one_in_progress(board.items)
            sweep_stale_temp_files(self.path.parent, (f".{self.path.name}.", TMP_PREFIX))
            write_json_with_backup(self.path, _dump(board))
        return result


def _checked_spec(spec: Any) -> tuple[str, str, str | None]:
    if not isinstance(spec, dict):
        raise ToolInputError(f"each todo item must be an object with content and status, got {spec!r}")
    status = spec.get("status") or "pending"
    return check_content(spec.get("content")), check_status(status), check_priority(spec.get("priority"))


def _spec_id(spec: dict[str, Any]) -> int | None:
    return None if spec.get("id") in (None, "") else check_id(spec.get("id"))


def _no_duplicate_ids(ids: list[int]) -> None:
    seen: set[int] = set()
    for item_id in ids:
        if item_id in seen:
            raise ToolInputError(f"todo id {item_id} appears twice; give each item its own id")
        seen.add(item_id)


def _replacement(old: TodoItem | None, item_id: int, content: str, status: str,
                 priority: str | None, stamp: str, session: str) -> TodoItem:
    if old and (old.content, old.status, old.priority) == (content, status, priority):
        return old
    created = old.created_at if old else stamp
    return TodoItem(item_id, content, status, priority, created, stamp, session or (old.session if old else ""))


def _empty() -> _Board:
    return _Board(next_id=1, items=[])


def _dump(board: _Board) -> dict[str, Any]:
    return {"version": BOARD_VERSION, "next_id": board.next_id,
            "items": [item.to_dict() for item in board.items]}


def _parse(value: Any) -> _Board:
    """Validate the JSON of a board (ValueError if it is not one) and build it.

    A board edited by hand to hold several in_progress items keeps the first and
    sets the others back to pending, with a warning.
    """
    if not isinstance(value, dict) or not isinstance(value.get("items"), list):
        raise ValueError("not a todo board (expected {\"version\": 1, \"next_id\": n, \"items\": [...]})")
    items = [_parse_item(raw) for raw in value["items"]]
    if len({item.id for item in items}) != len(items):
        raise ValueError("todo board holds the same id twice")
    next_id = value.get("next_id")
    if not isinstance(next_id, int) or next_id < 1:
        next_id = 1
    _demote_extra_in_progress(items)
    return _Board(next_id=max([next_id, *(i.id + 1 for i in items)]), items=items)


def _parse_item(raw: Any) -> TodoItem:
    if not isinstance(raw, dict):
        raise ValueError("a todo item is not an object")
    item_id, content, status = raw.get("id"), raw.get("content"), raw.get("status")
    if not isinstance(item_id, int) or isinstance(item_id, bool) or item_id < 1:
        raise ValueError(f"todo item has no valid id: {raw!r:.80}")
    if not isinstance(content, str) or status not in STATUSES:
        raise ValueError(f"todo item {item_id} has no valid content or status")
    priority = raw.get("priority") if raw.get("priority") in PRIORITIES else None
    return TodoItem(item_id, content, status, priority, str(raw.get("created_at") or ""),
                    str(raw.get("updated_at") or ""), str(raw.get("session") or ""))


def _demote_extra_in_progress(items: list[TodoItem]) -> None:
    busy = [item for item in items if item.status == "in_progress"]
    for item in busy[1:]:
        item.status = "pending"
    if len(busy) > 1:
        warnings.warn(f"todo board had {len(busy)} items in progress; kept item {busy[0].id}, "
                      "set the others to pending", stacklevel=4)
