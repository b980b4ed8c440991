"""Agent Skills (the agentskills.io SKILL.md standard): discovery, validation, catalog.

A skill is `NAME/SKILL.md` in a skill root; its front matter is validated (`name`,
`description`, ...), an invalid skill skipped with one SkillWarning, the first of a
repeated name wins. `allowed-tools` never approves anything. Reference: docs/harness.md.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ctxagent.harness.files import read_text

REPO_SKILL_DIRS: tuple[str, ...] = (".agents/skills", ".claude/skills", ".ctxagent/skills")
NAME_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_NAME, MAX_DESCRIPTION, MAX_COMPATIBILITY = 64, 1024, 500
#: Bytes of a SKILL.md read (its body is what the skill tool returns).
MAX_SKILL_BYTES = 256 * 1024
#: Share of the context window (in tokens) the catalog of names and descriptions may take.
CATALOG_SHARE = 0.02
_SKIP = {".git", "node_modules", "__pycache__"}


@dataclass(frozen=True)
class Skill:
    """One valid skill: `path` is its SKILL.md, `scope` "repo" or "user", `body` the
    Markdown after the front matter, `extra` the front-matter keys the standard does not name."""

    name: str
    description: str
    path: Path
    scope: str
    body: str = ""
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    allowed_tools: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        """The skill's folder (relative paths in its body are relative to it)."""
        return self.path.parent


@dataclass(frozen=True)
class SkillWarning:
    """A skill that was skipped (or shadowed): the file and the rule it broke."""

    path: Path
    rule: str

    def __str__(self) -> str:
        return f"skill {self.path} skipped: {self.rule}"


def skill_roots(repo: Path | None, home: Path | None, user_dir: Path | None = None) -> list[tuple[Path, str]]:
    """The folders searched, in precedence order, each with its scope. `user_dir` defaults
    to `<home>/.config/ctxagent`."""
    roots = [(Path(repo) / d, "repo") for d in REPO_SKILL_DIRS] if repo is not None else []
    if home is not None:
        roots.append((Path(home) / ".agents" / "skills", "user"))
    if user_dir is None and home is not None:
        user_dir = Path(home) / ".config" / "ctxagent"
    if user_dir is not None:
        roots.append((Path(user_dir) / "skills", "user"))
    return roots


def discover_skills(repo: Path | None, home: Path | None, *,
                    user_dir: Path | None = None) -> tuple[list[Skill], list[SkillWarning]]:
    """Every valid skill (first of a name wins) and a warning per skipped or shadowed one."""
    skills: dict[str, Skill] = {}
    warnings: list[SkillWarning] = []
    for root, scope in skill_roots(repo, home, user_dir):
        for path in _skill_files(root):
            skill = parse_skill(path, scope, confine=Path(repo) if scope == "repo" and repo is not None else None)
            if isinstance(skill, SkillWarning):
                warnings.append(skill)
            elif skill.name in skills:
                warnings.append(SkillWarning(path, f"the name {skill.name!r} is taken by {skills[skill.name].path}"))
            else:
                skills[skill.name] = skill
    return list(skills.values()), warnings


def _skill_files(root: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    return [Path(e.path) / "SKILL.md" for e in entries
            if e.name not in _SKIP and e.is_dir() and os.path.isfile(Path(e.path) / "SKILL.md")]


def parse_skill(path: Path, scope: str = "repo", *, confine: Path | None = None) -> Skill | SkillWarning:
    """The Skill in `path` (a SKILL.md), or the SkillWarning saying which rule it breaks.
    `confine`: a folder the skill must resolve inside (a repository's skills stay in it)."""
    path = Path(path)
    if confine is not None:
        real, base = os.path.realpath(path), os.path.realpath(confine)
        if os.path.commonpath([real, base]) != base:
            return SkillWarning(path, f"it resolves outside the repository ({real})")
    got = read_text(path)
    if got is None:
        return SkillWarning(path, "it cannot be read")
    front, body = split_front_matter(got[0][:MAX_SKILL_BYTES])
    if front is None:
        return SkillWarning(path, "it must start with YAML front matter between --- lines")
    meta = load_front_matter(front)
    if isinstance(meta, str):
        return SkillWarning(path, meta)
    problem = check_front_matter(meta, path.parent.name)
    if problem:
        return SkillWarning(path, problem)
    named = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
    tools = meta.get("allowed-tools")
    return Skill(name=meta["name"], description=meta["description"].strip(), path=path, scope=scope,
                 body=body.strip(), license=_str(meta.get("license")), compatibility=_str(meta.get("compatibility")),
                 metadata=dict(meta.get("metadata") or {}),
                 allowed_tools=" ".join(map(str, tools)) if isinstance(tools, list) else _str(tools),
                 extra={k: v for k, v in meta.items() if k not in named})


def split_front_matter(text: str) -> tuple[str | None, str]:
    """(front matter text, body) of a SKILL.md; (None, text) without an opening/closing `---`."""
    text = text.lstrip("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return None, text
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1:])
    return None, text


def load_front_matter(front: str) -> dict[str, Any] | str:
    """The front matter as a dict, or why not. A value holding `: ` unquoted (invalid
    YAML that other clients accept) is retried quoted, as the standard's guide advises."""
    for attempt in (front, _quote_colons(front)):
        try:
            meta = yaml.safe_load(attempt)
        except yaml.YAMLError as exc:
            error = f"its front matter is not valid YAML ({str(exc).splitlines()[0]})"
            continue
        if not isinstance(meta, dict):
            return "its front matter must be a mapping of keys (name, description...)"
        return meta
    return error


def _quote_colons(front: str) -> str:
    out = []
    for line in front.split("\n"):
        key, sep, value = line.partition(": ")
        value = value.strip()
        if sep and re.fullmatch(r"[A-Za-z][\w-]*", key) and ": " in value and value[:1] not in "\"'|>[{":
            line = f"{key}: " + '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        out.append(line)
    return "\n".join(out)


def check_front_matter(meta: dict[str, Any], folder_name: str) -> str | None:
    """The first rule of the standard `meta` breaks, or None."""
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not name:
        return "`name` is required (1-64 characters of a-z, 0-9 and -)"
    if len(name) > MAX_NAME:
        return f"`name` is {len(name)} characters; at most {MAX_NAME}"
    if not NAME_RE.fullmatch(name):
        return (f"`name` {name!r} may hold only a-z, 0-9 and single hyphens, and may not start or end "
                "with a hyphen")
    if name != folder_name:
        return f"`name` {name!r} must equal its folder's name {folder_name!r}"
    if not isinstance(description, str) or not description.strip():
        return "`description` is required (1-1,024 characters: what the skill does and when to use it)"
    if len(description) > MAX_DESCRIPTION:
        return f"`description` is {len(description):,} characters; at most {MAX_DESCRIPTION:,}"
    compatibility = meta.get("compatibility")
    if compatibility is not None and (not isinstance(compatibility, str) or not 1 <= len(compatibility) <= MAX_COMPATIBILITY):
        return f"`compatibility` must be text of 1-{MAX_COMPATIBILITY} characters"
    if meta.get("metadata") is not None and not isinstance(meta["metadata"], dict):
        return "`metadata` must be a mapping of keys to values"
    return None


def _str(value: Any) -> str | None:
    return None if value is None else str(value)
