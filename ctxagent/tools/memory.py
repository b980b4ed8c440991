"""`memory`: long-term memory the agent (or a library user) keeps across sessions.

The Hello-Agents textbook's MemoryTool (chapter 8), same calls: `MemoryTool(user_id=...)`,
`run({"action": "add"|"search"|"forget"|...})`; extra keys become metadata. Storage:
`ctxagent.memory`. Actions and results: docs/memory-rag.md ("Memory from Python").
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from msgspec import Meta

from ctxagent.errors import ToolInputError
from ctxagent.memory import upkeep
from ctxagent.memory.embeddings import detect_embedder
from ctxagent.memory.model import MEMORY_TYPES, check_type
from ctxagent.memory.render import render_item_rows, render_stats, render_summary, short
from ctxagent.memory.stale import staleness
from ctxagent.memory.store import DEFAULT_USER, MemoryStore
from ctxagent.storage.files import ensure_state_dir
from ctxagent.tools.base import Tool, ToolParams, ToolResult
from ctxagent.validation import field_names

Action = Literal["add", "search", "summary", "stats", "update", "remove", "forget", "consolidate", "clear_all"]


class TextbookExecute:
    """`execute(action, **kwargs)`, the textbook's second calling form beside the loop's
    `execute(args: dict) -> ToolResult`: returns what `run` returns, never raises (a failure is
    {"success": False, "error": message}). A dict argument keeps the loop contract."""

    def execute(self, args: Any = None, /, **kwargs: Any) -> Any:
        if not isinstance(args, str):
            if kwargs:
                args = {**(args or {}), **kwargs}
            return super().execute(args)  # type: ignore[misc]
        result = super().execute({"action": args, **kwargs})  # type: ignore[misc]
        return result.data if result.ok else {"success": False, "error": result.content}


#: Set by code, left out of the model's schema.
_INTERNAL = {"internal": True}


class MemoryParams(ToolParams):
    """Arguments of the `memory` tool. Unknown keys on add/update become metadata."""

    action: Annotated[Action, Meta(description="add | search | summary | stats | update | remove | forget | "
                                               "consolidate | clear_all")]
    content: Annotated[str | None, Meta(description="text to remember (add; update)")] = None
    memory_type: Annotated[str | None, Meta(description="working | episodic | semantic | perceptual "
                                            "(add, default working; update; search filter)")] = None
    importance: Annotated[float, Meta(ge=0, le=1, description="0..1 (add, default 0.5; update)")] | None = None
    file_path: Annotated[str | None, Meta(description="perceptual memory: the file it is about")] = None
    modality: Annotated[str | None, Meta(description="perceptual memory: image, audio, text... "
                                         "(inferred from file_path)")] = None
    metadata: Annotated[dict[str, Any] | None, Meta(description="extra facts to keep (add; update)")] = None
    query: Annotated[str | None, Meta(description="what to look for (search); any language")] = None
    memory_types: Annotated[list[str] | None, Meta(description="search only these types")] = None
    types: Annotated[list[str] | None, Meta(description="same as memory_types")] = None
    min_importance: Annotated[float, Meta(ge=0, le=1, description="search: skip less important (0.1)")] | None = None
    limit: Annotated[int, Meta(ge=1, le=100, description="most results (search, summary: 5)")] | None = None
    #: Not in the model's schema: the context engine's own searches leave out the memories of
    #: the session they are for (`ctxagent.agent.wiring.memory_search`).
    exclude_session_id: Annotated[str | None, Meta(
        description="search: leave out memories recorded with this session_id", extra=_INTERNAL)] = None
    #: Not in the model's schema: the context engine's searches leave out stale memories
    #: (files changed since: `ctxagent.memory.stale`); others show them marked.
    exclude_stale: Annotated[bool | None, Meta(description="search: leave out stale memories",
                                               extra=_INTERNAL)] = None
    memory_id: Annotated[str | None, Meta(description="id or unique id prefix (update, remove)")] = None
    strategy: Annotated[Literal["importance_based", "time_based", "capacity_based"] | None, Meta(
        description="forget: importance_based (default) | time_based | capacity_based")] = None
    threshold: Annotated[float, Meta(ge=0, le=1, description="forget importance_based: delete below "
                                     "(0.1); consolidate: promote at or above (0.7)")] | None = None
    max_age_days: Annotated[float, Meta(ge=0, description="forget time_based: delete older (30)")] | None = None
    max_capacity: Annotated[int, Meta(ge=0, description="forget capacity_based: keep this many")] | None = None
    from_type: Annotated[str | None, Meta(description="consolidate: from this type (working)")] = None
    to_type: Annotated[str | None, Meta(description="consolidate: to this type (episodic)")] = None
    importance_threshold: Annotated[float, Meta(ge=0, le=1, description="same as threshold "
                                                "(consolidate)")] | None = None
    confirm: Annotated[bool, Meta(description="clear_all: must be true")] = False


class MemoryTool(TextbookExecute, Tool):
    """Long-term memory in `<workspace>/.ctxagent/memory.db` (or `db_path`) for `user_id`;
    `memory_types` enabled (default all four), `max_capacity` (capacity_based forget keeps this
    many), `embedder` ("auto": a local model if installed; None: off), `session_id` (stored in new
    memories' metadata). A search's `exclude_session_id` (not in the model's schema) leaves that
    session's memories out."""

    name = "memory"
    description = ("Long-term memory across sessions: add facts, decisions and events (with importance "
                   "0-1), search them by meaning of words in any language, summarise, update, remove, "
                   "forget old or unimportant ones, consolidate working memories into episodic ones.")
    Params = MemoryParams
    writes_state = True

    def __init__(self, user_id: str = DEFAULT_USER, memory_types: list[str] | None = None, *,
                 db_path: str | Path | None = None, workspace: str | Path | None = None,
                 max_capacity: int = 10_000, embedder: Any = "auto", session_id: str | None = None) -> None:
        if db_path is None:
            db_path = ensure_state_dir(Path(workspace if workspace is not None else ".")) / "memory.db"
        folder = Path(db_path).parent
        #: The workspace whose files stale memories are checked against (None: not checked).
        self.workspace = Path(workspace) if workspace is not None else (
            folder.parent if folder.name == ".ctxagent" else None)
        self.user_id = user_id
        self.memory_types = tuple(check_type(t) for t in (memory_types or MEMORY_TYPES))
        self.max_capacity = max_capacity
        self.session_id = session_id
        self.store = MemoryStore(db_path, user_id=user_id,
                                 embedder=detect_embedder() if embedder == "auto" else embedder)

    @classmethod
    def for_repo(cls, repo: str | Path, settings: Any = None, *, session_id: str | None = None,
                 client: Any = None, **options: Any) -> MemoryTool:
        """The tool over `<repo>/.ctxagent/memory.db` (docs/state.md), new memories tagged
        with `session_id`; `options` go to the constructor. Raises StorageError (unopenable db)."""
        return cls(workspace=Path(repo), session_id=session_id, **options)

    def parse(self, args: dict[str, Any] | None) -> MemoryParams:
        """`args` validated, its keys that are no field put into `metadata` (the textbook's
        `add` with `file_path`, `source`...). Raises ToolInputError naming the bad field."""
        known = field_names(MemoryParams)
        if isinstance(args, dict) and isinstance(args.get("metadata") or {}, dict):
            extra = {k: v for k, v in args.items() if k not in known}
            if extra:  # checked with the rest (text, JSON values), as metadata
                args = {**{k: v for k, v in args.items() if k in known},
                        "metadata": {**(args.get("metadata") or {}), **extra}}
        return super().parse(args)

    def _run(self, params: MemoryParams) -> ToolResult:
        return getattr(self, f"_{params.action}")(params)

    def _add(self, p: MemoryParams) -> ToolResult:
        memory_type = self._enabled(p.memory_type or "working")
        meta = self._metadata(p)
        if self.session_id and "session_id" not in meta:
            meta["session_id"] = self.session_id
        item = self.store.add(p.content or "", memory_type, 0.5 if p.importance is None else p.importance,
                              file_path=p.file_path, modality=p.modality, metadata=meta)
        return ToolResult(True, f"added memory {item.id[:8]} [{item.memory_type}] "
                          f"importance={item.importance:.2f}: {short(item.content, 80)}", item.id)

    def _search(self, p: MemoryParams) -> ToolResult:
        types = p.memory_types or p.types or ([p.memory_type] if p.memory_type else None)
        limit = p.limit or 5
        hits = self.store.search(p.query or "", memory_types=[self._enabled(t) for t in types or []] or None,
                                 min_importance=0.1 if p.min_importance is None else p.min_importance,
                                 limit=limit * 2 if p.exclude_stale else limit, exclude_session=p.exclude_session_id)
        rows = []
        for item, score in hits:
            row, why = item.to_dict(score), staleness(item.metadata, self.workspace)
            if why and p.exclude_stale:
                continue
            if why:
                row["stale"], row["content"] = why, f"[stale: {why}] {row['content']}"
            rows.append(row)
        rows = rows[:limit]
        return ToolResult(True, render_item_rows(rows, f"no memories match {p.query!r}"), rows)

    def _summary(self, p: MemoryParams) -> ToolResult:
        data = upkeep.summary(self.store, p.limit or 5, self.memory_types)
        return ToolResult(True, render_summary(data), data)

    def _stats(self, p: MemoryParams) -> ToolResult:
        data = upkeep.stats(self.store, self.memory_types)
        return ToolResult(True, render_stats(data), data)

    def _update(self, p: MemoryParams) -> ToolResult:
        item = self.store.update(_need_id(p), content=p.content, importance=p.importance,
                                 memory_type=self._enabled(p.memory_type) if p.memory_type else None,
                                 metadata=self._metadata(p))
        return ToolResult(True, f"updated memory {item.id[:8]} [{item.memory_type}] "
                          f"importance={item.importance:.2f}: {short(item.content, 80)}", item.to_dict())

    def _remove(self, p: MemoryParams) -> ToolResult:
        item = self.store.remove(_need_id(p))
        return ToolResult(True, f"removed memory {item.id[:8]}: {short(item.content, 80)}", item.id)

    def _forget(self, p: MemoryParams) -> ToolResult:
        strategy = p.strategy or "importance_based"
        count = upkeep.forget(self.store, strategy, threshold=0.1 if p.threshold is None else p.threshold,
                              max_age_days=30.0 if p.max_age_days is None else p.max_age_days,
                              max_capacity=self.max_capacity if p.max_capacity is None else p.max_capacity)
        data = {"strategy": strategy, "forgotten": count, "remaining": self.store.count()}
        return ToolResult(True, f"forgot {count} memories ({strategy}); {data['remaining']} remain", data)

    def _consolidate(self, p: MemoryParams) -> ToolResult:
        threshold = next((v for v in (p.threshold, p.importance_threshold) if v is not None), 0.7)
        from_type, to_type = self._enabled(p.from_type or "working"), self._enabled(p.to_type or "episodic")
        ids = upkeep.consolidate(self.store, from_type=from_type, to_type=to_type, threshold=threshold)
        data = {"consolidated": len(ids), "ids": ids, "from_type": from_type, "to_type": to_type,
                "threshold": threshold}
        text = f"consolidated {len(ids)} memories ({from_type} -> {to_type}, importance >= {threshold})"
        return ToolResult(True, text, data)

    def _clear_all(self, p: MemoryParams) -> ToolResult:
        if p.confirm is not True:
            raise ToolInputError("clear_all deletes every memory of this user and cannot be undone; "
                                 "call it again with confirm: true if that is really wanted")
        count = self.store.clear()
        return ToolResult(True, f"cleared all {count} memories of {self.user_id}", {"cleared": count})

    def _enabled(self, memory_type: str) -> str:
        return check_type(memory_type, self.memory_types)

    def _metadata(self, p: MemoryParams) -> dict[str, Any]:
        return dict(p.metadata or {})


def _need_id(p: MemoryParams) -> str:
    if not p.memory_id:
        raise ToolInputError(f"{p.action} needs memory_id (an id from add, search or summary)")
    return p.memory_id
