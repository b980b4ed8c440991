"""The repository's own instructions for the model: its AGENTS.md chain, cut to a size.

The chain is the harness's (`ctxagent.harness.chain`: from the git root down to `repo`,
one AGENTS.override.md / AGENTS.md / CLAUDE.md / GEMINI.md per folder, `@path` imports
expanded); the agent adds the user's file and the profile files (`ctxagent.harness.layer`).
"""

from __future__ import annotations

from pathlib import Path

from ctxagent.harness.chain import load_chain

#: Bytes of a repository's AGENTS.md chain included (the harness's 32 KiB).
AGENTS_MD_MAX_CHARS = 32 * 1024


def read_agents_md(repo: Path, *, max_chars: int = AGENTS_MD_MAX_CHARS) -> str:
    """The AGENTS.md chain of `repo` (cut at `max_chars` bytes, marked), or "" when it has none."""
    return load_chain(Path(repo), None, max_bytes=max_chars).text().strip()
