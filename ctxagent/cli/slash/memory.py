"""`/memory` (the instruction and memory files in the system prompt) and `/skills`.

Each command sits on one function that says what is loaded for a running agent:
`loaded_memory_files(agent)` and `find_skills(agent)` (they get the agent, so a version
that needs its settings or its system layer has them). Today the system prompt holds only the repository root's
AGENTS.md (`ctxagent.context.instructions`), and skills are not loaded at all; when the
AGENTS.md chain, profile files and skills arrive, those two functions are replaced by
theirs and the commands show what they find.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ctxagent.cli.slash.context import ChatContext
from ctxagent.context.instructions import AGENTS_MD_MAX_CHARS, read_agents_md
from ctxagent.storage.files import state_dir

#: Where the Agent Skills standard and the tools that follow it keep skills (NAME/SKILL.md).
SKILL_DIRS = (".agents/skills", ".claude/skills", ".ctxagent/skills")
USER_SKILL_DIRS = ("~/.agents/skills", "~/.config/ctxagent/skills")


@dataclass(frozen=True)
class MemoryFile:
    """One file in the system prompt: `path`, `kind` ("AGENTS.md"...), `size_bytes` on disk,
    `chars` sent (after any cut) and `note` (a cut, say)."""

    path: Path
    kind: str
    size_bytes: int
    chars: int
    note: str = ""


def loaded_memory_files(agent: Any) -> list[MemoryFile]:
    """The instruction and memory files in `agent`'s system prompt (today: the root AGENTS.md)."""
    repo = Path(agent.session.repo)
    path = repo / "AGENTS.md"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        size = path.stat().st_size
    except OSError:
        return []
    cut = len(text) > AGENTS_MD_MAX_CHARS
    note = f"cut at {AGENTS_MD_MAX_CHARS:,} of {len(text):,} characters" if cut else ""
    return [MemoryFile(path, "AGENTS.md", size, len(read_agents_md(repo)), note)]


@dataclass(frozen=True)
class SkillListing:
    """What `find_skills` saw: `loaded` skills (name, path), the folders `searched`, and
    `unloaded` SKILL.md files found there that this build does not load."""

    loaded: list[tuple[str, Path]]
    searched: list[Path]
    unloaded: list[Path]


def find_skills(agent: Any, home: Path | None = None) -> SkillListing:
    """The skills `agent` has (none: this build loads no skills), the folders the Agent
    Skills standard names, and any `NAME/SKILL.md` lying in them unloaded."""
    home = Path(home or os.environ.get("HOME") or Path.home())
    searched = [Path(agent.session.repo) / d for d in SKILL_DIRS] + [home / d[2:] for d in USER_SKILL_DIRS]
    unloaded = sorted(p for d in searched if d.is_dir() for p in d.glob("*/SKILL.md"))
    return SkillListing(loaded=[], searched=searched, unloaded=unloaded)


def _memory(ctx: ChatContext, arg: str) -> None:
    files = loaded_memory_files(ctx.agent)
    if not files:
        ctx.console.print(f"no instruction files loaded (no {ctx.repo / 'AGENTS.md'})",
                          markup=False, soft_wrap=True)
    for f in files:
        note = f"; {f.note}" if f.note else ""
        ctx.console.print(f"  {f.kind:<10} {f.path}  {f.size_bytes:,} bytes, {f.chars:,} characters sent{note}",
                          markup=False, soft_wrap=True)
    db = state_dir(ctx.repo) / "memory.db"
    if db.exists():
        ctx.console.print(f"  long-term memory {db} ({db.stat().st_size:,} bytes; searched per request, "
                          "see `ctxagent memory list`)", markup=False, soft_wrap=True)


def _skills(ctx: ChatContext, arg: str) -> None:
    listing = find_skills(ctx.agent)
    for name, path in listing.loaded:
        ctx.console.print(f"  {name:<20} {path}", markup=False)
    if not listing.loaded:
        searched = ", ".join(str(p) for p in listing.searched)
        what = "no skills loaded" if listing.unloaded else "no skills found"
        ctx.console.print(f"{what} (searched: {searched})", markup=False, soft_wrap=True)
    if listing.unloaded:
        ctx.console.print(f"{len(listing.unloaded)} SKILL.md file(s) lie there, but this build does not load "
                          "skills yet: " + ", ".join(str(p) for p in listing.unloaded),
                          style="yellow", markup=False, soft_wrap=True)


def register_slash_commands(register: Callable[..., Any]) -> None:
    """Register /memory and /skills."""
    register("memory", "the instruction and memory files in the system prompt, with their sizes", _memory)
    register("skills", "the skills the agent has, and where it looked", _skills)
