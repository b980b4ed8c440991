"""A local knowledge base (RAG) over text, Markdown, code and PDF, behind the `rag` tool.

Modules, one idea each:
  extract.py   text out of files (pypdf for PDF), one segment per PDF page
  chunking.py  overlapping chunks sized in tokens, with line/page/heading positions
  store.py     KnowledgeBase: SQLite + the CJK-aware FTS5 index of `ctxagent.memory.fts`
"""

from ctxagent.rag.store import KnowledgeBase

__all__ = ["KnowledgeBase"]
