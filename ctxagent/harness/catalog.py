"""The skill catalog the system layer carries: names and descriptions only (progressive
disclosure), within a token budget (about 2% of the context window)."""

from __future__ import annotations

from pathlib import Path

from ctxagent.harness.skills import CATALOG_SHARE, Skill
from ctxagent.text.tokens import estimate_tokens

#: The catalog's budget never goes below this many tokens (a small window still lists a few).
MIN_CATALOG_TOKENS = 200


def catalog_budget(context_window: int | None) -> int:
    """Tokens the catalog may take: CATALOG_SHARE of `context_window` (8,192 if unknown)."""
    return max(MIN_CATALOG_TOKENS, int((context_window or 8192) * CATALOG_SHARE))


def render_catalog(skills: list[Skill], max_tokens: int, *, workspace: Path | None = None) -> tuple[str, int]:
    """(catalog text, skills listed). Skills that do not fit are counted in a last line
    that says how to list them all; "" when there are no skills."""
    if not skills:
        return "", 0
    head = ("Skills hold instructions for particular tasks. When a task matches a skill's description, "
            "call the `skill` tool with its name to load it before you start.")
    lines, used = [head], estimate_tokens(head)
    for skill in skills:
        line = f"- {skill.name}: {' '.join(skill.description.split())} ({_where(skill, workspace)})"
        cost = estimate_tokens(line) + 1
        if used + cost > max_tokens:
            break
        lines.append(line)
        used += cost
    shown = len(lines) - 1
    if shown < len(skills):
        lines.append(f"[{len(skills) - shown} more skills not listed (catalog budget {max_tokens:,} tokens); "
                     "`skill` with action `list` shows them all]")
    return "\n".join(lines), shown


def _where(skill: Skill, workspace: Path | None) -> str:
    if workspace is not None:
        try:
            return str(skill.path.relative_to(workspace))
        except ValueError:
            pass
    return str(skill.path)
