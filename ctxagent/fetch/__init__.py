"""context_fetch internals: one call, several sources, ranked files.

Entry point `search.py` (walk, index, literal search, rank, hits, budget); the other
sources are `sources.py` and `tests_artifacts.py`; `render.py` writes what the model
receives. One line per module: `ctxagent/fetch/README.md`; the story: docs/context-fetch.md.
"""
