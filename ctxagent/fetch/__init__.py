"""context_fetch internals: one call, several sources, ranked files.

- `walk.py`: which workspace files are searched, and the `--glob` filter.
- `files.py`: literal candidate search with ripgrep, or a pure-Python scan.
- `chunks.py`: definition chunks of a file (the fine granularity of the ranking).
- `rank.py`: `WorkspaceIndex`, BM25 over files and chunks with field weights.
- `hits.py`: the lines shown for a ranked file, with context.
- `budget.py`: token counting and the fair split of a source's budget between hits.
- `cache.py`: the per-workspace index and a small LRU of results, invalidated on change.
- `search.py`: the files source end to end (walk, index, literal search, rank, hits, budget).
- `sources.py`: notes, memory and test-artifact sources (degrade when unavailable).
- `fit.py`: the notes, memory and tests sources cut to their budgets.
- `tests_artifacts.py`: last failed tests from `.pytest_cache`, JUnit XML reports.
- `render.py`: the compact text the model receives.
"""
