"""`context_fetch`: one call gathers ranked files, notes, memory and test failures.

`ContextFetchTool(workspace=".").run({"query": ...})` returns {"query", "sources": {files,
notes, memory, tests}, "unavailable", "info"}; the model gets compact text. Each source
has its own token budget; the query is data (`ctxagent.fetch.files`). docs/context-fetch.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from msgspec import Meta

from ctxagent.errors import ToolInputError
from ctxagent.fetch import sources as src
from ctxagent.fetch.files import find_rg
from ctxagent.fetch.fit import fit_memory, fit_notes, fit_tests
from ctxagent.fetch.render import render_result
from ctxagent.fetch.search import FileQuery, fetch_files
from ctxagent.tools.base import Tool, ToolParams, ToolResult

SOURCES = ("files", "notes", "memory", "tests")
DEFAULT_BUDGET = 800  # tokens per source (issue 3)
DEFAULT_MAX_FILES = 8
#: Most notes / memories asked of their stores before budgeting.
ROWS_PER_SOURCE = 10

Source = Literal["files", "notes", "memory", "tests"]


class ContextFetchParams(ToolParams):
    """Arguments of `context_fetch`."""

    query: Annotated[str, Meta(min_length=1, max_length=2000, description="what you are looking for: a question, "
                               "identifiers or an error message")]
    sources: Annotated[list[Source] | None, Meta(description="files, notes, memory, tests (default: all)")] = None
    glob: Annotated[str, Meta(max_length=200, description="only files matching this glob, e.g. '*.py' or "
                              "'src/**'")] | None = None
    max_files: Annotated[int, Meta(ge=1, le=50, description="most files to return (default 8)")] | None = None
    budget_tokens: Annotated[int, Meta(ge=50, le=20000, description="token budget of each source "
                                       "(default 800)")] | None = None


class ContextFetchTool(Tool):
    """Ranked files, notes, memory and test failures for a query, in one call.

    `workspace`: the repository folder; `budget_per_source`: tokens per source;
    `max_files`: default number of ranked files; `use_ripgrep`: False forces the
    pure-Python literal search (also used when `rg` is not installed).
    """

    name = "context_fetch"
    description = (
        "Find what is relevant to a question in one call: ranked files with numbered lines "
        "and context, matching notes and memories, and the last failing tests. Use it before "
        "reading files one by one."
    )
    Params = ContextFetchParams

    def __init__(self, workspace: str | Path = ".", budget_per_source: int = DEFAULT_BUDGET, *,
                 max_files: int = DEFAULT_MAX_FILES, use_ripgrep: bool = True) -> None:
        self.workspace = Path(workspace)
        self.budget_per_source = budget_per_source
        self.max_files = max_files
        self.use_ripgrep = use_ripgrep

    @classmethod
    def for_repo(cls, repo: str | Path, settings: Any = None, *, session_id: str | None = None,
                 client: Any = None) -> ContextFetchTool:
        """The tool searching repository `repo` (its files, notes, memory and test reports)."""
        return cls(workspace=repo)

    def _run(self, p: ContextFetchParams) -> ToolResult:
        query = _check_query(p.query)
        glob = _check_glob(p.glob)
        budget = p.budget_tokens or self.budget_per_source
        root = self._root()
        data: dict[str, Any] = {"query": query, "sources": {}, "unavailable": {}, "info": {}}
        for name in dict.fromkeys(p.sources or SOURCES):
            try:
                data["sources"][name] = self._source(name, root, query, glob, p.max_files or self.max_files, budget, data)
            except src.SourceUnavailable as exc:
                data["unavailable"][name] = str(exc)
        return ToolResult(True, render_result(data, data["info"]), data)

    def _root(self) -> Path:
        if not self.workspace.is_dir():
            raise ToolInputError(f"context_fetch: workspace {str(self.workspace)!r} is not a folder; "
                                 "create it or pass the repository folder")
        return self.workspace.resolve()

    def _source(self, name: str, root: Path, query: str, glob: str | None, max_files: int, budget: int,
                data: dict[str, Any]) -> Any:
        if name == "files":
            rg = find_rg() if self.use_ripgrep else None
            found = fetch_files(root, FileQuery(query, glob, max_files, budget, rg))
            data["info"] = {k: found[k] for k in ("engine", "indexed", "cached")}
            return found["files"]
        if name == "notes":
            return fit_notes(src.search_notes(root, query, ROWS_PER_SOURCE), budget)
        if name == "memory":
            return fit_memory(src.search_memory(root, query, ROWS_PER_SOURCE), budget)
        return fit_tests(src.collect_test_artifacts(root), budget)


def _check_query(query: str) -> str:
    if not query.strip():
        raise ToolInputError("context_fetch: query is empty; say what you are looking for")
    if "\0" in query:
        raise ToolInputError("context_fetch: query contains a NUL character; remove it")
    return query


def _check_glob(glob: str | None) -> str | None:
    if glob is None or not glob.strip():
        return None
    if any(c in glob for c in "\0\n\r"):
        raise ToolInputError("context_fetch: glob must be one line without NUL; e.g. '*.py' or 'src/**'")
    return glob.strip()
