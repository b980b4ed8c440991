"""Long-term memory in SQLite (`<repo>/.ctxagent/memory.db`), behind the `memory` tool.

`MemoryStore` (store.py), ranking (search.py), upkeep (upkeep.py), the CJK-aware FTS5
index shared with rag (fts.py), optional embeddings. One line per module:
`ctxagent/memory/README.md`; the story: docs/memory-rag.md.
"""

from ctxagent.memory.model import MEMORY_TYPES, MemoryItem
from ctxagent.memory.store import DEFAULT_USER, MemoryStore

__all__ = ["DEFAULT_USER", "MEMORY_TYPES", "MemoryItem", "MemoryStore"]
