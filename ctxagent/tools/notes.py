"""`note`: structured notes the agent keeps outside its context window.

The Hello-Agents textbook's NoteTool (section 9.4), same constructor and calls:
`NoteTool(workspace="./project_notes").run({"action": "create", ...})`. Storage:
`ctxagent.notes.store`. Actions and results: docs/notes-todo-plan.md ("Notes").
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from msgspec import Meta

from ctxagent.notes.model import NOTE_TYPES, Note
from ctxagent.notes.store import DEFAULT_LIST_LIMIT, DEFAULT_SEARCH_LIMIT, NoteStore
from ctxagent.storage.files import ensure_state_dir
from ctxagent.tools.base import Tool, ToolParams, ToolResult

#: Characters of a note body shown per row in list/search text for the model.
SNIPPET_CHARS = 160


class NoteParams(ToolParams):
    """Arguments of the `note` tool (unknown keys are ignored, as in the textbook)."""

    action: Annotated[Literal["create", "read", "update", "delete", "list", "search", "summary"], Meta(
        description="create | read | update | delete | list | search | summary")]
    title: Annotated[str | None, Meta(description="note title (create; update)")] = None
    content: Annotated[str | None, Meta(description="Markdown body (create; update)")] = None
    note_type: Annotated[str | None, Meta(description=f"one of {', '.join(NOTE_TYPES)} "
                                          "(create, default general; update; filter for list/search)")] = None
    tags: Annotated[list[str] | str | None, Meta(description="tags (create; update; list/search "
                                                 "keep notes with any of them)")] = None
    note_id: Annotated[str | None, Meta(description="id of the note (read, update, delete)")] = None
    query: Annotated[str | None, Meta(description="words to search for (search)")] = None
    limit: Annotated[int, Meta(ge=1, le=200, description="most rows to return (list 20, search 10)")] | None = None


class NoteTool(Tool):
    """Create, read, update, delete, list, search and summarise notes in `workspace`.

    `workspace`: the notes folder, as in the textbook (`for_repo` uses `<repo>/.ctxagent/notes`).
    `auto_backup`: keep `.bak` copies of the index and of replaced notes.
    `max_notes`: creating more is refused with a clear error.
    """

    name = "note"
    description = (
        "Structured notes that outlive the context window: record task state, conclusions, "
        "blockers, next actions and references; find them later with list or search."
    )
    Params = NoteParams
    writes_state = True

    def __init__(self, workspace: str | Path = "./notes", auto_backup: bool = True, max_notes: int = 1000) -> None:
        self.workspace = Path(workspace)
        self.auto_backup = auto_backup
        self.max_notes = max_notes
        self.store = NoteStore(self.workspace, max_notes=max_notes, auto_backup=auto_backup)

    @classmethod
    def for_repo(cls, repo: str | Path, settings: Any = None, *, session_id: str | None = None,
                 client: Any = None, **options: Any) -> NoteTool:
        """The tool over `<repo>/.ctxagent/notes` (docs/state.md); `options` go to the constructor."""
        return cls(workspace=ensure_state_dir(Path(repo)) / "notes", **options)

    def _run(self, params: NoteParams) -> ToolResult:
        return getattr(self, f"_{params.action}")(params)

    def _create(self, p: NoteParams) -> ToolResult:
        note = self.store.create(p.title or "", p.content, p.note_type or "general", p.tags)
        return ToolResult(True, f"created note {note.id} [{note.type}] {_one_line(note.title)}", note.id)

    def _read(self, p: NoteParams) -> ToolResult:
        note = self.store.get(p.note_id or "")
        return ToolResult(True, render_note(note), _as_read(note, self.store.folder))

    def _update(self, p: NoteParams) -> ToolResult:
        note = self.store.update(p.note_id or "", title=p.title, content=p.content,
                                 note_type=p.note_type or None, tags=p.tags)
        text = f"updated note {note.id} [{note.type}] {_one_line(note.title)}"
        return ToolResult(True, text, _as_read(note, self.store.folder))

    def _delete(self, p: NoteParams) -> ToolResult:
        note = self.store.delete(p.note_id or "")
        return ToolResult(True, f"deleted note {note.id} ({_one_line(note.title)})", note.id)

    def _list(self, p: NoteParams) -> ToolResult:
        notes = self.store.list(note_type=p.note_type, tags=_tag_filter(p.tags),
                                limit=p.limit or DEFAULT_LIST_LIMIT)
        rows = [n.as_item() for n in notes]
        return ToolResult(True, render_rows(notes, [None] * len(notes), "no notes"), rows)

    def _search(self, p: NoteParams) -> ToolResult:
        hits = self.store.search(p.query or "", note_type=p.note_type, tags=_tag_filter(p.tags),
                                 limit=p.limit or DEFAULT_SEARCH_LIMIT)
        rows = [{**n.as_item(), "score": round(s, 4)} for n, s in hits]
        text = render_rows([n for n, _ in hits], [s for _, s in hits], f"no notes match {p.query!r}")
        return ToolResult(True, text, rows)

    def _summary(self, p: NoteParams) -> ToolResult:
        summary = self.store.summary()
        return ToolResult(True, render_summary(summary), summary)


def _tag_filter(tags: list[str] | str | None) -> list[str] | None:
    if tags is None or isinstance(tags, list):
        return tags
    return tags.split(",")


def _as_read(note: Note, folder: Path) -> dict[str, Any]:
    meta = note.metadata()
    meta["file_path"] = str(folder / f"{note.id}.md")
    return {"metadata": meta, "content": note.content}


def _one_line(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def render_note(note: Note) -> str:
    """A note as text for the model: a header line, tags and times, then the body."""
    tags = " ".join(f"#{t}" for t in note.tags)
    head = f"note {note.id} [{note.type}] {_one_line(note.title)}"
    meta = f"tags: {tags or '-'} | created {note.created_at[:19]} | updated {note.updated_at[:19]}"
    return f"{head}\n{meta}\n\n{note.content}"


def render_rows(notes: list[Note], scores: list[float | None], empty: str) -> str:
    """One compact line per note (id, type, title, tags, update time, score), then a snippet."""
    if not notes:
        return empty
    lines = []
    for note, score in zip(notes, scores):
        tags = " ".join(f"#{t}" for t in note.tags)
        extra = f" score={score:.2f}" if score is not None else ""
        lines.append(f"- {note.id} [{note.type}] {_one_line(note.title)} {tags} "
                     f"(updated {note.updated_at[:16].replace('T', ' ')}){extra}".replace("  ", " "))
        snippet = _one_line(note.content, SNIPPET_CHARS)
        if snippet:
            lines.append(f"  {snippet}")
    return "\n".join(lines)


def render_summary(summary: dict[str, Any]) -> str:
    """The summary dict as a few lines of text."""
    types = ", ".join(f"{k}={v}" for k, v in summary["type_distribution"].items()) or "-"
    lines = [f"{summary['total_notes']} notes ({types})"]
    for row in summary["recent_notes"]:
        lines.append(f"- {row['id']} [{row['type']}] {_one_line(row['title'])} "
                     f"(updated {row['updated_at'][:16].replace('T', ' ')})")
    return "\n".join(lines)
