"""The textbook's `MemoryTool` and `RAGTool` for the chapter-9 examples: ctxagent's real tools.

Both run offline (SQLite with a full-text index; no model, no network) and take the
textbook's calls unchanged (`run({"action": "add" | "search", ...})`):

- `MemoryTool` IS `ctxagent.tools.MemoryTool`: memories live in `./.ctxagent/memory.db`
  of the folder you run the example from (kept between runs, as in the textbook).
- `RAGTool` is `ctxagent.tools.RAGTool` with one convenience for the examples: it adds
  the sample documents of `examples/knowledge_base/*.md` when created (the textbook
  adds its documents with `add_document` in chapter 8, before 9.3.4 searches them).
  Adding a document again leaves it unchanged (content hash), so this is cheap. The
  knowledge base itself is `<knowledge_base_path>/rag_knowledge_base.db`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxagent.tools import MemoryTool
from ctxagent.tools import RAGTool as _RAGTool

__all__ = ["MemoryTool", "RAGTool", "SAMPLES"]

#: The sample documents the examples search (Markdown, Chinese).
SAMPLES = Path(__file__).resolve().parent / "knowledge_base"


class RAGTool(_RAGTool):
    """`ctxagent.tools.RAGTool` holding the SAMPLES documents (see the module doc)."""

    def __init__(self, knowledge_base_path: str | Path = "./knowledge_base", *args: Any, **kwargs: Any) -> None:
        super().__init__(knowledge_base_path, *args, **kwargs)
        for document in sorted(SAMPLES.glob("*.md")):
            self.run({"action": "add_document", "file_path": str(document)})
