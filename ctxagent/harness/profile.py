"""The seed agent's profile files: optional Markdown files, each its own tagged section.

Read from the user's folder (`~/.config/ctxagent/`) and then the repository's
`.ctxagent/`, in PROFILE_FILES order. `{memory_path}` and `{custom_skill_path}` are filled
in (only these two; other braces are left alone). Each file is cut at `max_bytes`, the cut
marked in the text, with one warning per cut file. `<!-- ... -->` comments are not sent
(`ctxagent init`'s starting files are all comment). Reference: docs/harness.md.
"""

from __future__ import annotations

import re
from pathlib import Path

from ctxagent.harness.files import LoadedFile, cut_bytes, read_text

#: (file name, section tag), in the order the sections appear (the seed agent's order).
PROFILE_FILES: tuple[tuple[str, str], ...] = (
    ("Agent.md", "Agent_Profile"),
    ("Skill.md", "Standard_Skills"),
    ("PythonSkill.md", "Python_Coding_Standard"),
    ("Memory.md", "Long_Term_Memory"),
    ("CustomSkill.md", "Custom_Skills"),
    ("Spec.md", "Workflow_Constraints"),
)
#: Bytes of one profile file sent to the model; the rest is cut (marked, warned about).
PROFILE_MAX_BYTES = 16 * 1024
#: A file holding only one of these headings (and comments) is empty: `ctxagent init`'s start.
_HEADINGS_ONLY = frozenset({"# Long-term memory", "# Custom skills"})
MEMORY_FILE = "Memory.md"
CUSTOM_SKILL_FILE = "CustomSkill.md"


def repo_profile_dir(repo: Path) -> Path:
    """`<repo>/.ctxagent`, where the repository's profile files live (and memory_file writes)."""
    return Path(repo) / ".ctxagent"


def placeholders(repo: Path) -> dict[str, str]:
    """The two placeholders and their values: the files `memory_file` appends to."""
    folder = repo_profile_dir(repo)
    return {"{memory_path}": str(folder / MEMORY_FILE), "{custom_skill_path}": str(folder / CUSTOM_SKILL_FILE)}


def fill(text: str, values: dict[str, str]) -> str:
    """`text` with each placeholder of `values` replaced; any other `{...}` left as is."""
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def strip_comments(text: str) -> str:
    """`text` without its `<!-- ... -->` comments (an unclosed one runs to the end)."""
    return re.sub(r"<!--.*?(-->|\Z)", "", text, flags=re.S)


def load_profile(repo: Path, user_dir: Path | None, *,
                 max_bytes: int = PROFILE_MAX_BYTES) -> tuple[list[LoadedFile], list[str]]:
    """The profile files found (user's first, then the repository's, per PROFILE_FILES
    entry) and one warning per file that was cut. Empty or blank files are skipped."""
    values = placeholders(repo)
    found: list[LoadedFile] = []
    warnings: list[str] = []
    for name, tag in PROFILE_FILES:
        for scope, folder in (("user", user_dir), ("repo", repo_profile_dir(repo))):
            if folder is None:
                continue
            got = read_text(Path(folder) / name)
            body = strip_comments(got[0]) if got is not None else ""
            if not body.strip() or body.strip() in _HEADINGS_ONLY:
                continue
            text, cut = cut_bytes(fill(body, values).strip(), max_bytes, name)
            found.append(LoadedFile(Path(folder) / name, "profile", scope, got[1], cut, text, tag))
            if cut:
                warnings.append(f"{Path(folder) / name} is {got[1]:,} bytes; only the first {max_bytes:,} "
                                f"are sent to the model (profile files are cut at {max_bytes:,} bytes)")
    return found, warnings


def render_profile(files: list[LoadedFile]) -> str:
    """The profile sections as text: `<Tag>` ... `</Tag>`, one per file name present,
    each file preceded by a `(from PATH)` line."""
    parts = []
    for _, tag in PROFILE_FILES:
        mine = [f for f in files if f.tag == tag]
        if mine:
            body = "\n\n".join(f"(from {f.path})\n{f.text}" for f in mine)
            parts.append(f"<{tag}>\n{body}\n</{tag}>")
    return "\n\n".join(parts)
