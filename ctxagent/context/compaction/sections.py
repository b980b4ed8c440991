"""The compaction summary: its fixed sections, parsing, validation and merging.

A summary is Markdown with six `## ` sections (issue 4, "Compaction"): goal; progress
and decisions; constraints and preferences; key facts (paths, ids, commands, errors);
current state; next steps. Each section is a list of `- ` items. Both the LLM summary
and the extractive fallback (`ctxagent.context.compaction.extractive`) use this shape, so a later
compaction can parse an earlier summary and carry its items forward instead of
summarizing it again into nothing (case C03).
"""

from __future__ import annotations

import re

#: Section keys and their headings, in order.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("goal", "Goal"),
    ("progress", "Progress and decisions"),
    ("constraints", "Constraints and preferences"),
    ("facts", "Key facts"),
    ("state", "Current state"),
    ("next", "Next steps"),
)
#: First line of every summary message; how a later compaction recognises one.
SUMMARY_MARKER = "[Context summary: earlier messages of this session were compacted]"
#: Minimum characters of section content (outside headings) for an LLM summary to count.
MIN_CONTENT_CHARS = 40

_HEADING = re.compile(r"^\s*(?:#{1,6}\s*|\*\*)\s*([^#*\n]+?)\s*(?:\*\*)?\s*:?\s*$", re.MULTILINE)
_KEYWORDS = {
    "goal": ("goal",),
    "progress": ("progress", "decision"),
    "constraints": ("constraint", "preference"),
    "facts": ("key fact", "facts"),
    "state": ("current state", "state"),
    "next": ("next step", "next"),
}


def _section_key(heading: str) -> str | None:
    low = heading.lower()
    for key, words in _KEYWORDS.items():
        if any(low.startswith(word) or word in low for word in words):
            return key
    return None


def split_sections(text: str) -> dict[str, str]:
    """Body text of each recognised section of `text`, keyed by section key.

    Headings may be `## Goal`, `### Key facts (paths, ids)`, `**Next steps:**`; a
    heading that names no known section ends the previous section. Repeated headings
    are joined.
    """
    out: dict[str, str] = {}
    matches = list(_HEADING.finditer(text))
    for i, match in enumerate(matches):
        key = _section_key(match.group(1))
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        body = text[match.end():end].strip()
        if key is not None:
            out[key] = (out[key] + "\n" + body).strip() if key in out else body
    return out


def parse_items(body: str) -> list[str]:
    """The `- ` / `* ` / `1. ` items of a section body; continuation lines join their item.

    A body without list markers yields its non-empty lines as items.
    """
    items: list[str] = []
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        marker = re.match(r"^(?:[-*+]|\d+[.)])\s+(.*)$", stripped)
        if marker:
            items.append(marker.group(1).strip())
        elif items and line[:1].isspace():
            items[-1] += " " + stripped
        else:
            items.append(stripped)
    return items


def parse_summary(text: str) -> dict[str, list[str]]:
    """Items per section key (every key of SECTIONS present, possibly empty)."""
    bodies = split_sections(strip_marker(text))
    return {key: parse_items(bodies.get(key, "")) for key, _ in SECTIONS}


def render_summary(sections: dict[str, list[str]]) -> str:
    """Markdown with all six headings, in order; an empty section says `- (none)`."""
    parts = []
    for key, heading in SECTIONS:
        items = sections.get(key) or ["(none)"]
        parts.append(f"## {heading}\n" + "\n".join(f"- {item}" for item in items))
    return "\n\n".join(parts)


def strip_marker(text: str) -> str:
    """`text` without a leading SUMMARY_MARKER line."""
    stripped = text.lstrip()
    if stripped.startswith(SUMMARY_MARKER):
        return stripped[len(SUMMARY_MARKER):].lstrip("\n")
    return text


def is_summary_message(message: dict) -> bool:
    """True for a user message that carries a compaction summary."""
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and content.lstrip().startswith(SUMMARY_MARKER)


def summary_problem(text: str | None) -> str | None:
    """Why `text` is not a usable summary, or None: all six section headings (any level, or bold)
    and MIN_CONTENT_CHARS of content are needed (catches empty replies, refusals, fragments;
    case C03)."""
    if not text or not text.strip():
        return "the summary was empty"
    bodies = split_sections(strip_marker(text))
    missing = [heading for key, heading in SECTIONS if key not in bodies]
    if missing:
        return "the summary lacks the sections: " + ", ".join(missing)
    content = sum(len(item) for body in bodies.values() for item in parse_items(body) if item != "(none)")
    if content < MIN_CONTENT_CHARS:
        return f"the summary has only {content} characters of content"
    return None


def summary_message(text: str) -> dict:
    """The user message that carries a summary (marker line + the sections)."""
    return {"role": "user", "content": f"{SUMMARY_MARKER}\n{strip_marker(text).strip()}"}


def insert_items(text: str, key: str, items: list[str]) -> str:
    """`text` with `items` added as `- ` lines at the end of section `key`.

    Used to put user-stated facts that an LLM summary left out back into its Key facts
    section. If the section is not found, a new section is appended.
    """
    if not items:
        return text
    lines = "\n".join(f"- {item}" for item in items)
    matches = list(_HEADING.finditer(text))
    for i, match in enumerate(matches):
        if _section_key(match.group(1)) == key:
            end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
            head, tail = text[:end].rstrip(), text[end:]
            return f"{head}\n{lines}\n\n{tail.lstrip()}".rstrip() + "\n"
    heading = dict(SECTIONS)[key]
    return f"{text.rstrip()}\n\n## {heading}\n{lines}\n"
