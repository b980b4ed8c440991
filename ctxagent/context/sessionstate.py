"""Read the session state the assembler re-injects: the todo board and relevant notes.

`gather_state(repo, query)` returns (state, problems): `state` has `todos` (item dicts
from `<repo>/.ctxagent/todos.json`) and `notes` (up to MAX_NOTES notes of
`<repo>/.ctxagent/notes/`, the most relevant to `query` by BM25, else the most recent,
each cut to NOTE_CHARS characters). A source that cannot be read is reported in
`problems` and skipped; assembling goes on (issue 4).
"""

from __future__ import annotations

from pathlib import Path

from ctxagent.storage import state_dir

MAX_NOTES = 5
NOTE_CHARS = 600


def _todos(repo: Path) -> list[dict]:
    from ctxagent.todo.board import TodoBoard

    path = state_dir(repo) / "todos.json"
    if not path.exists():
        return []
    return [item.to_dict() for item in TodoBoard(path).items()]


def _notes(repo: Path, query: str) -> list[dict]:
    from ctxagent.notes.store import NoteStore

    folder = state_dir(repo) / "notes"
    if not folder.is_dir():
        return []
    store = NoteStore(folder)
    found = [note for note, _ in store.search(query, limit=MAX_NOTES)] if query.strip() else []
    notes = found or store.list(limit=MAX_NOTES)
    return [{"id": n.id, "title": n.title, "content": _clip(n.content)} for n in notes]


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= NOTE_CHARS else text[:NOTE_CHARS].rstrip() + " [...]"


def gather_state(repo: str | Path, query: str = "") -> tuple[dict, list[str]]:
    """({"todos": [...], "notes": [...]}, problems) for the repository `repo`."""
    state: dict = {}
    problems: list[str] = []
    for key, read in (("todos", _todos), ("notes", lambda r: _notes(r, query))):
        try:
            value = read(Path(repo))
        except Exception as exc:  # a broken source is reported and skipped, never fatal
            problems.append(f"{key} could not be read: {type(exc).__name__}: {exc}")
            continue
        if value:
            state[key] = value
    return state, problems
