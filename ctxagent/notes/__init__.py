"""Structured notes on disk: Markdown files with YAML front matter plus an index.

Modules: `model` (the Note record, types, id rules), `frontmatter` (YAML front matter
read/write), `files` (one note file), `index` (notes_index.json kept in step with the
files), `store` (`NoteStore`, the API behind `NoteTool` and `ctxagent notes`).
"""
