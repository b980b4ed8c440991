"""Small offline stand-ins for the textbook's `MemoryTool` and `RAGTool` (Hello-Agents ch. 8-9).

They offer the same `run` actions the chapter-9 example uses, ranked with ctxagent's own
BM25 (`ctxagent.context.scoring`), and keep everything in memory or read local files:
no model, no network. Swap in `ctxagent.tools.MemoryTool` / `RAGTool` once those exist.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ctxagent.context.scoring import BM25Index


class MemoryTool:
    """`run({"action": "add", "content", "memory_type", "importance"})` and
    `run({"action": "search", "query", "limit", "min_importance"})` -> list of dicts."""

    def __init__(self, user_id: str = "default") -> None:
        self.user_id = user_id
        self.items: list[dict[str, Any]] = []

    def run(self, args: dict[str, Any]) -> Any:
        action = args.get("action")
        if action == "add":
            item = {"id": f"mem_{len(self.items)}", "content": str(args["content"]),
                    "memory_type": args.get("memory_type", "working"), "importance": float(args.get("importance", 0.5)),
                    "timestamp": time.time()}
            self.items.append(item)
            return item["id"]
        if action == "search":
            pool = [m for m in self.items if m["importance"] >= float(args.get("min_importance", 0.0))]
            ranked = BM25Index([m["content"] for m in pool]).top(str(args.get("query", "")), int(args.get("limit", 5)))
            return [{**pool[i], "score": round(s, 4)} for i, s in ranked]
        raise ValueError(f"unknown action {action!r}: use add or search")


class RAGTool:
    """`run({"action": "search", "query", "limit"})` over the paragraphs of the Markdown and
    text files in `knowledge_base_path` -> {"results": [{"content", "source", "score"}]}."""

    def __init__(self, knowledge_base_path: str = "./knowledge_base") -> None:
        folder = Path(knowledge_base_path)
        if not folder.is_dir():  # the example may run from another folder
            folder = Path(__file__).resolve().parent / knowledge_base_path
        self.chunks: list[tuple[str, str]] = []
        for path in sorted(folder.glob("*.md")) + sorted(folder.glob("*.txt")):
            for block in path.read_text(encoding="utf-8").split("\n\n"):
                if block.strip() and not block.lstrip().startswith("# "):
                    self.chunks.append((block.strip(), path.name))

    def run(self, args: dict[str, Any]) -> Any:
        if args.get("action") != "search":
            raise ValueError(f"unknown action {args.get('action')!r}: use search")
        ranked = BM25Index([c for c, _ in self.chunks]).top(str(args.get("query", "")), int(args.get("limit", 5)))
        return {"results": [{"content": self.chunks[i][0], "source": self.chunks[i][1], "score": round(s, 4)} for i, s in ranked]}
