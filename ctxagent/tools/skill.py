"""`skill`: load an Agent Skill (SKILL.md) when the task matches it: progressive disclosure.

The system layer lists only names and descriptions; `{"name": N}` returns the skill's body,
its folder and the files it brings (listed, not read); `{"name": N, "file": "references/x.md"}`
returns one of those files, confined to the skill's folder (so a skill in ~/.agents/skills,
outside the workspace the terminal may read, is readable too); `{"action": "list"}` lists
every skill found. Discovery and the rules: `ctxagent.harness.skills`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from msgspec import Meta

from ctxagent.errors import ToolInputError
from ctxagent.harness.activate import activation_text, read_skill_file
from ctxagent.harness.skills import Skill, discover_skills
from ctxagent.tools.base import Tool, ToolParams, ToolResult


class SkillParams(ToolParams):
    """Arguments of the `skill` tool."""

    action: Annotated[Literal["activate", "list"], Meta(description="activate (default) or list")] = "activate"
    name: Annotated[str | None, Meta(description="the skill's name, as the Skills list shows it")] = None
    file: Annotated[str | None, Meta(description="a file of the skill, relative to its folder "
                                                 "(e.g. references/api.md)")] = None


class SkillTool(Tool):
    """The skills found for `workspace` (repository roots, then the user's under `home`)."""

    name = "skill"
    description = ("Load a skill (specialised instructions for a kind of task) by name when the task matches its "
                   "description; with `file`, read one of the skill's files (scripts/, references/, assets/).")
    Params = SkillParams

    def __init__(self, workspace: str | Path = ".", *, home: Path | None = None, user_dir: Path | None = None,
                 skills: list[Skill] | None = None) -> None:
        self.workspace = Path(workspace).resolve()
        found = skills if skills is not None else discover_skills(self.workspace, home, user_dir=user_dir)[0]
        self.skills = {s.name: s for s in found}

    @classmethod
    def for_repo(cls, repo: str | Path, settings: Any = None, *, session_id: str | None = None,
                 client: Any = None) -> SkillTool:
        """The skills of `repo` and of the user (HOME, and the config folder of `user_config_path`)."""
        from ctxagent.config.settings import user_config_path

        home = Path(os.environ.get("HOME") or Path.home())
        return cls(repo, home=home, user_dir=user_config_path().parent)

    @property
    def offered(self) -> bool:
        """False when no skill was found: the agent is then not given this tool."""
        return bool(self.skills)

    def _run(self, params: SkillParams) -> ToolResult:  # type: ignore[override]
        if params.action == "list" or not params.name:
            if params.action != "list":
                raise ToolInputError("skill: give the `name` of a skill; " + self._names())
            lines = [f"- {s.name} ({s.scope}, {s.path}): {' '.join(s.description.split())}" for s in self.skills.values()]
            return ToolResult(True, "\n".join(lines) or "no skills are installed", [s.name for s in self.skills.values()])
        skill = self.skills.get(params.name.strip())
        if skill is None:
            raise ToolInputError(f"skill: no skill named {params.name!r}; " + self._names())
        if params.file:
            try:
                text = read_skill_file(skill, params.file)
            except ValueError as exc:
                raise ToolInputError(f"skill: {exc}") from None
            return ToolResult(True, text, {"skill": skill.name, "file": params.file})
        return ToolResult(True, activation_text(skill, workspace=self.workspace),
                          {"skill": skill.name, "path": str(skill.path)})

    def _names(self) -> str:
        return f"the skills are: {', '.join(self.skills)}" if self.skills else "no skills are installed"
