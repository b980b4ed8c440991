"""Long-term memory in SQLite (`<repo>/.ctxagent/memory.db`), behind the `memory` tool.

Modules, one idea each:
  model.py       MemoryItem, the four memory types, input checks
  migrations.py  memory.db's schema as numbered migrations (runner: ctxagent.storage.migrations)
  fts.py         FTS5 full-text search that works for Chinese (shared with `ctxagent.rag`)
  store.py       MemoryStore: open, add, get, update, remove, clear (WAL, one transaction each)
  search.py      ranking: bm25 relevance x recency x importance
  upkeep.py      forget, consolidate, stats, summary
  embeddings.py  optional local embedding model (off unless installed)
"""

from ctxagent.memory.model import MEMORY_TYPES, MemoryItem
from ctxagent.memory.store import DEFAULT_USER, MemoryStore

__all__ = ["DEFAULT_USER", "MEMORY_TYPES", "MemoryItem", "MemoryStore"]
