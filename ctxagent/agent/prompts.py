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

__all__ = ["AGENTS_MD_MAX_CHARS", "feedback", "read_agents_md", "render", "system_prompt", "tidy_lines"]

_PROMPTS = prompts("ctxagent.agent")


def render(name: str, /, **variables: Any) -> str:
    """Render the loop's prompt `<name>.md`. Raises jinja2.UndefinedError on a missing variable."""
    return _PROMPTS.render(name, **variables)


def feedback(kind: str, /, **variables: Any) -> str:
    """Render the `feedback.md` macro `kind` (e.g. "invalid_arguments") to one tool-result text.
    Line structure and indentation are kept (a refused patch quotes lines to copy exactly);
    only trailing spaces, blank lines at either end and runs of blank lines are tidied."""
    return tidy_lines(_PROMPTS.macro("feedback", kind, **variables))


def tidy_lines(text: str) -> str:
    """`text` with each line's trailing white space removed, runs of blank lines cut to one,
    and blank lines at the start and end dropped; leading indentation is kept."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.rstrip()
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


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
