"""`rag`: a local knowledge base the agent searches and cites (no server, no network).

The Hello-Agents textbook's RAGTool conventions (chapter 8): `RAGTool(knowledge_base_path=...)`,
`execute("add_document"|"add_text"|"search"|"stats"|"clear", ...)`; results carry lines,
page and a `citation`. Stored in `<knowledge_base_path>/<collection_name>.db`.
Actions and results: docs/memory-rag.md ("Knowledge base").
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from msgspec import Meta

from ctxagent.errors import ToolInputError, ToolRefusedError
from ctxagent.memory.render import short
from ctxagent.rag.chunking import DEFAULT_OVERLAP, DEFAULT_SIZE, check_sizes, chunk_document
from ctxagent.rag.extract import Extracted, Segment, extract
from ctxagent.rag.store import KnowledgeBase
from ctxagent.storage.files import ensure_state_dir
from ctxagent.tools.base import Tool, ToolParams, ToolResult
from ctxagent.tools.memory import TextbookExecute

_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


class RAGParams(ToolParams):
    """Arguments of the `rag` tool (unknown keys are ignored, as in the textbook)."""

    action: Annotated[Literal["add_document", "add_text", "search", "stats", "clear", "ask"], Meta(
        description="add_document | add_text | search | stats | clear")]
    file_path: Annotated[str | None, Meta(description="add_document: the file (text, Markdown, code or PDF)")] = None
    path: Annotated[str | None, Meta(description="same as file_path")] = None
    text: Annotated[str | None, Meta(description="add_text: the text to add")] = None
    document_id: Annotated[str | None, Meta(description="add_text/add_document: a name for the document")] = None
    source: Annotated[str | None, Meta(description="add_text: where the text came from (shown in citations)")] = None
    title: Annotated[str | None, Meta(description="add_text/add_document: a title")] = None
    query: Annotated[str | None, Meta(description="search: what to look for; any language")] = None
    question: Annotated[str | None, Meta(description="same as query")] = None
    limit: Annotated[int, Meta(ge=1, le=50, description="search: most results (5)")] | None = None
    min_score: Annotated[float, Meta(ge=0, le=1, description="search: keep chunks scoring at least this "
                                     "(scores are relative: the best match is 1.0)")] | None = None
    chunk_size: Annotated[int | None, Meta(description="tokens per chunk (default 400)")] = None
    chunk_overlap: Annotated[int | None, Meta(description="tokens shared by neighbouring chunks (default 60)")] = None
    confirm: Annotated[bool, Meta(description="clear: must be true")] = False


class RAGTool(TextbookExecute, Tool):
    """A knowledge base in `<knowledge_base_path>/<collection_name>.db`, seen through `rag_namespace`.
    `workspace` (the agent's repository): add_document reads only files inside it and cites them
    relative to it; None (library use): paths resolved against the current folder, cited absolute.
    `chunk_size`/`chunk_overlap`: defaults, in tokens."""

    name = "rag"
    description = ("A local knowledge base of documents (text, Markdown, code, PDF): add files or text, then "
                   "search it; each result cites its source, lines and page.")
    Params = RAGParams
    writes_state = True

    def __init__(self, knowledge_base_path: str | Path = "./knowledge_base", collection_name: str = "rag_knowledge_base",
                 rag_namespace: str = "default", *, workspace: str | Path | None = None,
                 chunk_size: int = DEFAULT_SIZE, chunk_overlap: int = DEFAULT_OVERLAP) -> None:
        if not _NAME_RE.match(collection_name):
            raise ToolInputError(f"collection_name {collection_name!r} must be a simple name (letters, digits, _ . -)")
        check_sizes(chunk_size, chunk_overlap)
        self.knowledge_base_path = Path(knowledge_base_path)
        self.collection_name = collection_name
        self.rag_namespace = rag_namespace
        self.workspace = Path(workspace).resolve() if workspace is not None else None
        self.chunk_size, self.chunk_overlap = chunk_size, chunk_overlap
        self.kb = KnowledgeBase(self.knowledge_base_path / f"{collection_name}.db", namespace=rag_namespace)

    @classmethod
    def for_repo(cls, repo: str | Path, settings: Any = None, *, session_id: str | None = None,
                 client: Any = None, **options: Any) -> RAGTool:
        """The tool over `<repo>/.ctxagent/knowledge/`, reading files inside `repo` only;
        `options` go to the constructor. Raises StorageError (unopenable knowledge base)."""
        return cls(ensure_state_dir(Path(repo)) / "knowledge", workspace=Path(repo), **options)

    def _run(self, params: RAGParams) -> ToolResult:
        return getattr(self, f"_{params.action}")(params)

    def _add_document(self, p: RAGParams) -> ToolResult:
        given = p.file_path or p.path
        if not given:
            raise ToolInputError("add_document needs file_path: the file to add (text, Markdown, code or PDF)")
        path = self._resolve(given)
        doc = extract(path)
        if p.title:
            doc.title = p.title
        shown = str(path.relative_to(self.workspace)) if self.workspace is not None else str(path)
        return self._store(doc, p.document_id or shown, shown, p)

    def _add_text(self, p: RAGParams) -> ToolResult:
        if not p.text or not p.text.strip():
            raise ToolInputError("add_text needs text: the content to add to the knowledge base")
        digest = hashlib.sha256(p.text.encode("utf-8")).hexdigest()[:16]
        key = p.document_id or p.source or p.title or f"text:{digest}"
        kind = "markdown" if p.text.lstrip().startswith("#") else "text"
        doc = Extracted(kind, p.title or p.document_id or p.source or f"text {digest[:8]}",
                        [Segment(p.text.replace("\r\n", "\n"))])
        return self._store(doc, key, p.source or p.document_id or key, p)

    def _store(self, doc: Extracted, key: str, source: str, p: RAGParams) -> ToolResult:
        size = self.chunk_size if p.chunk_size is None else p.chunk_size
        overlap = min(self.chunk_overlap, size // 4) if p.chunk_overlap is None else p.chunk_overlap
        chunks = chunk_document(doc, size, overlap)
        content_hash = hashlib.sha256(f"{doc.digest()}|{size}|{overlap}".encode()).hexdigest()
        data = self.kb.put(key, source=source, title=doc.title, kind=doc.kind, content_hash=content_hash,
                           chunks=chunks)
        data["success"] = True
        verb = "unchanged" if data["unchanged"] else "replaced" if data["replaced"] else "added"
        return ToolResult(True, f"{verb} {data['source']} ({doc.kind}, {data['chunks']} chunks)", data)

    def _search(self, p: RAGParams) -> ToolResult:
        query = p.query or p.question or ""
        if not query.strip():
            raise ToolInputError("search needs query: the words or question to look for")
        hits = self.kb.search(query, limit=p.limit or 5, min_score=p.min_score or 0.0)
        return ToolResult(True, render_hits(hits, query), hits)

    def _ask(self, p: RAGParams) -> ToolResult:
        raise ToolInputError("the rag tool does not call a model; use action search and answer from the "
                             "cited chunks")

    def _stats(self, p: RAGParams) -> ToolResult:
        docs = self.kb.documents()
        kinds: dict[str, int] = {}
        for doc in docs:
            kinds[doc["kind"]] = kinds.get(doc["kind"], 0) + 1
        data = {"documents": len(docs), "chunks": sum(d["chunks"] for d in docs), "kinds": kinds,
                "namespace": self.rag_namespace, "db_path": str(self.kb.path), "db_bytes": self.kb.db_bytes(),
                "search_backend": "fts5", "sources": [d["source"] for d in docs]}
        kinds_text = ", ".join(f"{k}={v}" for k, v in kinds.items()) or "-"
        return ToolResult(True, f"{data['documents']} documents ({kinds_text}), {data['chunks']} chunks "
                          f"in namespace {self.rag_namespace}", data)

    def _clear(self, p: RAGParams) -> ToolResult:
        if p.confirm is not True:
            raise ToolInputError("clear deletes every document of this knowledge base namespace; call it again "
                                 "with confirm: true if that is really wanted")
        count = self.kb.clear()
        return ToolResult(True, f"cleared {count} documents from namespace {self.rag_namespace}", {"cleared": count})

    def _resolve(self, given: str) -> Path:
        base = self.workspace or Path.cwd()
        path = (base / Path(given).expanduser()).resolve()
        if self.workspace is not None and not path.is_relative_to(self.workspace):
            raise ToolRefusedError(f"{given} is outside the workspace {self.workspace}; only files inside it can be "
                                   "added to the knowledge base")
        return path


def render_hits(hits: list[dict[str, Any]], query: str) -> str:
    """Each hit as `[n] citation (score)` and its text, cut to 600 characters."""
    if not hits:
        return f"no knowledge base chunks match {query!r}"
    parts = []
    for n, hit in enumerate(hits, 1):
        heading = f" - {hit['heading']}" if hit.get("heading") else ""
        parts.append(f"[{n}] {hit['citation']}{heading} (score {hit['score']:.2f})\n{short(hit['content'], 600)}")
    return "\n".join(parts)
