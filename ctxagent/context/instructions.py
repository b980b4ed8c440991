"""The repository's own instructions for the model: the root's AGENTS.md, cut to a size."""

from __future__ import annotations

from pathlib import Path

#: Characters of a repository's AGENTS.md included in the system prompt.
AGENTS_MD_MAX_CHARS = 16_000


def read_agents_md(repo: Path, *, max_chars: int = AGENTS_MD_MAX_CHARS) -> str:
    """The repository root's AGENTS.md (cut at `max_chars`, marked), or "" if absent/unreadable."""
    path = Path(repo) / "AGENTS.md"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    if len(text) > max_chars:
        text = text[:max_chars] + f"\n[... AGENTS.md cut at {max_chars:,} of {len(text):,} characters ...]"
    return text.strip()
