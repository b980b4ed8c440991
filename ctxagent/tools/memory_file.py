"""`memory_file`: the seed agent's "remember X" and "learn to do X", kept in Markdown.

`remember` appends a dated entry to `<repo>/.ctxagent/Memory.md`; `learn` appends a skill
block (title, when to use, how) to `<repo>/.ctxagent/CustomSkill.md`. Both files are
profile files, so the next session's system layer carries them. An entry that is already
there is refused; nothing is ever deleted or rewritten (`ctxagent.harness.memory_write`).
A write is a change: the loop asks for approval with a preview, as for a patch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from msgspec import Meta

from ctxagent.errors import ToolInputError
from ctxagent.harness import memory_write
from ctxagent.harness.profile import CUSTOM_SKILL_FILE, MEMORY_FILE, repo_profile_dir
from ctxagent.tools.base import Tool, ToolParams, ToolResult


class MemoryFileParams(ToolParams):
    """Arguments of the `memory_file` tool."""

    action: Annotated[Literal["remember", "learn"], Meta(
        description="remember: keep a fact or preference in Memory.md; learn: keep a reusable way of "
                    "doing something in CustomSkill.md")]
    content: Annotated[str | None, Meta(description="remember: the fact, one or two sentences")] = None
    title: Annotated[str | None, Meta(description="learn: the skill's short title")] = None
    when: Annotated[str | None, Meta(description="learn: when to use it")] = None
    how: Annotated[str | None, Meta(description="learn: how to do it, step by step")] = None


class MemoryFileTool(Tool):
    """Appends to the profile's Memory.md and CustomSkill.md in `<workspace>/.ctxagent/`."""

    name = "memory_file"
    description = ("Keep something for later sessions in the project's Markdown memory: `remember` a fact "
                   "or a preference the user stated (Memory.md), or `learn` a reusable procedure (CustomSkill.md: "
                   "title, when to use, how). Appends only; an entry already there is refused.")
    Params = MemoryFileParams
    needs_approval = True
    writes_state = True

    def __init__(self, workspace: str | Path = ".") -> None:
        self.folder = repo_profile_dir(Path(workspace))

    @classmethod
    def for_repo(cls, repo: str | Path, settings: Any = None, *, session_id: str | None = None,
                 client: Any = None) -> MemoryFileTool:
        """The tool over `<repo>/.ctxagent/Memory.md` and `CustomSkill.md`."""
        return cls(workspace=repo)

    def preview(self, args: dict[str, Any]) -> str:
        """What would be appended, and where (shown for approval). Raises ToolInputError."""
        p = self.parse(args)
        path, text = self._entry(p)
        return f"append to {path}:\n" + "".join(f"+{line}\n" for line in text.rstrip("\n").split("\n"))

    def _entry(self, p: MemoryFileParams) -> tuple[Path, str]:
        import datetime as dt

        today = dt.date.today()
        if p.action == "remember":
            return self.folder / MEMORY_FILE, memory_write.memory_entry(_need(p.content, "content"), today)
        return self.folder / CUSTOM_SKILL_FILE, memory_write.skill_block(
            _need(p.title, "title"), _need(p.when, "when"), _need(p.how, "how"), today)

    def _run(self, params: MemoryFileParams) -> ToolResult:  # type: ignore[override]
        if params.action == "remember":
            done = memory_write.remember(self.folder / MEMORY_FILE, _need(params.content, "content"))
        else:
            done = memory_write.learn(self.folder / CUSTOM_SKILL_FILE, _need(params.title, "title"),
                                      _need(params.when, "when"), _need(params.how, "how"))
        data = {"path": str(done.path), "appended": done.text, "size": done.size}
        return ToolResult(True, f"appended to {done.path} ({done.size:,} bytes now); later sessions read it", data)


def _need(value: str | None, field: str) -> str:
    if value is None or not value.strip():
        raise ToolInputError(f"memory_file: `{field}` is required for this action")
    return value
