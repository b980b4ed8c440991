"""The loop's prompts, in `ctxagent/agent/prompts/` (loaded by `ctxagent.templates`).

No prompt prose lives in Python: the system prompt is `system.md`, and the short texts
the loop sends back to the model as tool results (invalid arguments, unknown tool,
refusal, interruption) are macros in `feedback.md`. A missing variable fails loudly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxagent.context.instructions import AGENTS_MD_MAX_CHARS, read_agents_md
from ctxagent.harness.layer import SystemLayer, build_system_layer
from ctxagent.storage.files import state_dir
from ctxagent.templates import prompts

__all__ = ["AGENTS_MD_MAX_CHARS", "feedback", "read_agents_md", "render", "system_prompt"]

_PROMPTS = prompts("ctxagent.agent")


def render(name: str, /, **variables: Any) -> str:
    """Render the loop's prompt `<name>.md`. Raises jinja2.UndefinedError on a missing variable."""
    return _PROMPTS.render(name, **variables)


def feedback(kind: str, /, **variables: Any) -> str:
    """Render the `feedback.md` macro `kind` (e.g. "invalid_arguments") to one tool-result text."""
    return " ".join(_PROMPTS.macro("feedback", kind, **variables).split())


def system_prompt(repo: Path, tool_names: list[str], layer: SystemLayer | None = None) -> str:
    """The system message for an agent working in `repo` with tools `tool_names`; `layer`:
    the harness's profile files, AGENTS.md chain and skill catalog (None: the chain of
    `repo` alone, as `ctxagent.harness.layer.build_system_layer` loads it with no user folder)."""
    repo = Path(repo).resolve()
    layer = layer if layer is not None else build_system_layer(repo)
    return render(
        "system",
        workspace=str(repo),
        state_dir=str(state_dir(repo)),
        tools=tool_names,
        harness=layer.text(),
    )
