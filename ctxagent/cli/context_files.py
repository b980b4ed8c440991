"""The files source of `ctxagent context`: what `context_fetch` finds in the repository for
the query (ranked files, grep-style numbered lines), one evidence packet per file.

The agent's model gets these lines by calling context_fetch; `ctxagent context` shows them
so a question about the code previews code (issue 15, item 11). A failure is reported as
the source's status, never fatal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxagent.context import ContextPacket
from ctxagent.fetch.hits import render_hit
from ctxagent.tools.context_fetch import DEFAULT_BUDGET, ContextFetchTool

#: The status key of this source in the report's `sources`.
SOURCE = "context_fetch_files"


def file_packets(repo: Path, query: str, budget: int = DEFAULT_BUDGET) -> tuple[list[ContextPacket], dict[str, Any]]:
    """(one `type` "file" packet per ranked file, best first; the source status {"ok", "items" | "error"}).
    `budget`: tokens for all files together (context_fetch's per-source budget)."""
    result = ContextFetchTool(workspace=repo, budget_per_source=budget).execute(
        {"query": query[:2000], "sources": ["files"]})
    if not result.ok:
        return [], {"ok": False, "error": result.content[:500]}
    groups = (result.data or {}).get("sources", {}).get("files", [])
    packets = [_packet(group) for group in groups if group.get("hits")]
    return packets, {"ok": True, "items": len(packets)}


def _packet(group: dict[str, Any]) -> ContextPacket:
    """`File (path, score 0.93):` then the numbered lines, as context_fetch shows them."""
    lines = "".join(render_hit(hit) for hit in group["hits"]).rstrip("\n")
    score = group.get("score")
    title = f"{group['path']}, score {score:.2f}" if isinstance(score, (int, float)) else group["path"]
    return ContextPacket("\n" + lines, relevance_score=float(score) if isinstance(score, (int, float)) else None,
                         metadata={"type": "file", "source": "context_fetch", "id": group["path"], "title": title,
                                   "path": group["path"]})
