"""Read the session state the assembler re-injects: the todo board and the notes.

`gather_state(repo, query)` -> (state, problems): `todos` from `.ctxagent/todos.json`,
the MAX_NOTES newest `notes` cut to NOTE_CHARS; `state.select` chooses later. An
unreadable source goes to `problems` and is skipped (issue 4).
"""

from __future__ import annotations

from pathlib import Path

from ctxagent.storage.files import state_dir

#: Notes offered to selection (the most recently updated); NoteStore's own cap is 1,000.
MAX_NOTES = 500
#: Characters of a note's body offered (about 400 tokens); the note tool reads the rest.
NOTE_CHARS = 1500


def _todos(repo: Path) -> list[dict]:
    from ctxagent.todo.board import TodoBoard

    path = state_dir(repo) / "todos.json"
    if not path.exists():
        return []
    return [item.to_dict() for item in TodoBoard(path).items()]


def _notes(repo: Path) -> list[dict]:
    from ctxagent.notes.store import NoteStore

    folder = state_dir(repo) / "notes"
    if not folder.is_dir():
        return []
    notes = NoteStore(folder).list(limit=MAX_NOTES)
    return [{**n.metadata(), "content": _clip(n.content)} for n in notes]


def _clip(text: str) -> str:
    text = text.strip()
    if len(text) <= NOTE_CHARS:
        return text
    return f"{text[:NOTE_CHARS].rstrip()} [... {len(text) - NOTE_CHARS:,} more characters: read the note for the rest]"


def gather_state(repo: str | Path, query: str = "") -> tuple[dict, list[str]]:
    """({"todos": [...], "notes": [...]}, problems) for the repository `repo`.

    `query` is accepted for the `load_state(repo, query)` signature the assembler calls
    and not used: relevance is judged by the selection, against the whole request.
    """
    del query
    state: dict = {}
    problems: list[str] = []
    for key, read in (("todos", _todos), ("notes", _notes)):
        try:
            value = read(Path(repo))
        except Exception as exc:  # a broken source is reported and skipped, never fatal
            problems.append(f"{key} could not be read: {type(exc).__name__}: {exc}")
            continue
        if value:
            state[key] = value
    return state, problems
