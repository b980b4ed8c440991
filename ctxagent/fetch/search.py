"""The files source: rank the workspace for a query and show the best lines, in budget.

Steps: start the literal search (`files`: ripgrep runs meanwhile, or Python later) and the
BM25 of files and chunks on the index as it is (`rank`, in a thread) -> check the listing (`listing`)
-> refresh the index (`cache`; when it changed, BM25 again) -> the literal hits' bonus ->
pick lines with context (`hits`) -> fit the source's token budget (`budget`).
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ctxagent.fetch.budget import count_tokens, fair_shares
from ctxagent.fetch.cache import workspace_cache
from ctxagent.fetch.files import LiteralSearch
from ctxagent.fetch.hits import hit_tokens, make_hit, select_lines, trim_hit
from ctxagent.fetch.rank import RankedFile
from ctxagent.fetch.walk import glob_match, read_text


@dataclass(frozen=True)
class FileQuery:
    """One files-source request. `budget`: tokens for the whole source; `rg`: the
    ripgrep binary or None for the Python scan."""

    query: str
    glob: str | None
    max_files: int
    budget: int
    rg: str | None


def file_header(group: dict[str, Any]) -> str:
    """The line introducing a file's hits: `path  (score 0.93)`; ends in a newline."""
    return f"{group['path']}  (score {group['score']:.2f})\n"


def fetch_files(root: Path, request: FileQuery) -> dict[str, Any]:
    """{"files": [{"path", "score", "hits": [...]}], "engine": "rg"|"python",
    "indexed": n files, "cached": bool, "updated": files this call (re-)indexed} for
    `request` over workspace `root`."""
    cache = workspace_cache(root)
    key = (request.query, request.glob, request.max_files, request.budget, request.rg)
    # a new query starts rg at once, to run while the files are listed and ranked
    fresh = key not in cache.results
    search = LiteralSearch(cache.root, request.query, glob=request.glob, rg=request.rg) if fresh else None
    index, stamp = cache.index, cache.stamp
    early = Background(lambda: index.scores(request.query)) if fresh and request.glob is None else None
    entries, updated = cache.sync()
    hit = cache.results.get(key)
    if hit is not None:
        if search is not None:
            search.cancel()
        return {**copy.deepcopy(hit), "cached": True, "updated": updated}
    search = search or LiteralSearch(cache.root, request.query, glob=request.glob, rg=request.rg)
    allowed = None if request.glob is None else {e.rel for e in entries if glob_match(e.rel, request.glob)}
    if early is not None and stamp is not None and stamp == cache.stamp and index is cache.index:  # no refresh
        scores = early.result()
    else:
        scores = cache.index.scores(request.query, allowed=allowed)
    literal = search.result()
    ranked = scores.ranked(literal=set(literal.lines), limit=request.max_files)
    groups = [_group(cache.root, item, request.query, literal.lines.get(item.rel, [])) for item in ranked]
    result = {"files": fit_groups(groups, request.budget), "engine": literal.engine,
              "indexed": len(cache.index), "cached": False}
    cache.results.put(key, copy.deepcopy(result))
    return {**result, "updated": updated}


class Background:
    """`fn()` run in a thread from now on; `result()` waits for its value (or raises its error).
    The index's SQLite work releases the GIL, so it overlaps the file listing."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._fn, self._value, self._error = fn, None, None
        self._thread = threading.Thread(target=self._run, name="context_fetch-scores", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
            self._error = exc

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def _group(root: Path, item: RankedFile, query: str, literal: list[tuple[int, str]]) -> dict[str, Any]:
    text = read_text(root / item.rel) or ""
    lines = text.split("\n")
    chosen = select_lines(lines, query, item.chunks, [number for number, _ in literal])
    return {"path": item.rel, "score": item.score, "hits": [make_hit(lines, i) for i in chosen]}


def fit_groups(groups: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """Groups cut to `budget` tokens in all: file headers first (lowest-ranked files
    dropped while the headers alone exceed half the budget), then the rest shared
    fairly between all hits (`ctxagent.fetch.budget.fair_shares`)."""
    groups = list(groups)
    while groups and sum(count_tokens(file_header(g)) for g in groups) > budget // 2:
        groups.pop()
    left = budget - sum(count_tokens(file_header(g)) for g in groups)
    flat = [(gi, hit) for gi, group in enumerate(groups) for hit in group["hits"]]
    shares = fair_shares(left, [hit_tokens(hit) for _, hit in flat])
    fitted: list[list[dict[str, Any]]] = [[] for _ in groups]
    for (gi, hit), share in zip(flat, shares):
        trimmed = trim_hit(hit, share)
        if trimmed is not None:
            fitted[gi].append(trimmed)
    return [{**group, "hits": hits} for group, hits in zip(groups, fitted)]
