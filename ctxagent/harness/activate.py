"""Activating a skill: its body, where it lives, and the files it brings (listed, not read);
and reading one of those files, confined to the skill's folder."""

from __future__ import annotations

import os
from pathlib import Path

from ctxagent.harness.files import read_text
from ctxagent.harness.skills import Skill

#: Files of a skill folder listed on activation, at most.
MAX_LISTED = 50
#: Bytes of one skill file returned by `read_skill_file`.
MAX_FILE_BYTES = 64 * 1024


def skill_files(skill: Skill) -> list[str]:
    """Paths (relative to the skill folder, sorted) of its files other than SKILL.md."""
    out: list[str] = []
    for folder, dirs, files in os.walk(skill.folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__"))
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(folder, name), skill.folder)
            if rel != "SKILL.md":
                out.append(rel.replace(os.sep, "/"))
        if len(out) > MAX_LISTED:
            break
    return out


def activation_text(skill: Skill, *, workspace: Path | None = None) -> str:
    """What the model gets when it activates `skill`: the body in `<skill_content>`, the
    skill folder, how to read its files, and the list of those files."""
    folder = skill.folder
    inside = workspace is not None and _inside(folder, workspace)
    shown = os.path.relpath(folder, workspace) if inside else str(folder)
    how = (f"Read them with the terminal (e.g. `cat {shown}/<file>`) or with `skill` and `file`."
           if inside else "Read them with `skill` and `file` (the folder is outside the workspace).")
    files = skill_files(skill)
    listed = "\n".join(f"  <file>{f}</file>" for f in files[:MAX_LISTED])
    more = f"\n  [... more files than {MAX_LISTED}; list the folder to see them]" if len(files) > MAX_LISTED else ""
    extra = f"\nCompatibility: {skill.compatibility}" if skill.compatibility else ""
    resources = f"\n<skill_resources>\n{listed}{more}\n</skill_resources>" if files else ""
    return (f'<skill_content name="{skill.name}">\n{skill.body}\n\nSkill directory: {shown}{extra}\n'
            f"Relative paths in this skill are relative to the skill directory. {how}{resources}\n</skill_content>")


def read_skill_file(skill: Skill, relative: str) -> str:
    """The text of `relative` (a path inside the skill folder), cut at MAX_FILE_BYTES.
    Raises ValueError when it leaves the folder (symbolic links included) or is not a file."""
    base = os.path.realpath(skill.folder)
    target = os.path.realpath(os.path.join(base, relative))
    if os.path.isabs(relative) or os.path.commonpath([target, base]) != base:
        raise ValueError(f"{relative!r} is outside the skill folder {skill.folder}; give a path relative to it")
    got = read_text(Path(target))
    if got is None:
        raise ValueError(f"{relative!r} is not a file of skill {skill.name}; files: {', '.join(skill_files(skill)[:20])}")
    text, size = got
    if size > MAX_FILE_BYTES:
        text = text.encode("utf-8")[:MAX_FILE_BYTES].decode("utf-8", "ignore") + (
            f"\n[... cut at {MAX_FILE_BYTES:,} of {size:,} bytes ...]")
    return text


def _inside(path: Path, root: Path) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(root)
    return os.path.commonpath([real, base]) == base
