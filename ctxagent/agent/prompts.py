"""Load and render the prompt files in `ctxagent/agent/prompts/` (Jinja2, StrictUndefined).

No prompt prose lives in Python: the system prompt is `system.md`, and the short texts
the loop sends back to the model as tool results (invalid arguments, unknown tool,
refusal, interruption) are macros in `feedback.md`. A missing variable fails loudly.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from ctxagent.storage.files import state_dir

PROMPTS_DIR = Path(__file__).parent / "prompts"
#: Characters of a repository's AGENTS.md included in the system prompt.
AGENTS_MD_MAX_CHARS = 16_000


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(PROMPTS_DIR)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )


def render(name: str, **variables: Any) -> str:
    """Render prompt file `<name>.md`. Raises jinja2.UndefinedError on a missing variable."""
    return _env().get_template(f"{name}.md").render(**variables).strip()


def feedback(kind: str, **variables: Any) -> str:
    """Render the `feedback.md` macro `kind` (e.g. "invalid_arguments") to one tool-result text."""
    macro = getattr(_env().get_template("feedback.md").make_module(), kind)
    return " ".join(str(macro(**variables)).split())


def read_agents_md(repo: Path, *, max_chars: int = AGENTS_MD_MAX_CHARS) -> str:
    """The repository root's AGENTS.md (cut at `max_chars`, marked), or "" if absent/unreadable."""
    path = Path(repo) / "AGENTS.md"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    if len(text) > max_chars:
        text = text[:max_chars] + f"\n[... AGENTS.md cut at {max_chars:,} of {len(text):,} characters ...]"
    return text.strip()


def system_prompt(repo: Path, tool_names: list[str]) -> str:
    """The system message for an agent working in `repo` with tools `tool_names`."""
    repo = Path(repo).resolve()
    return render(
        "system",
        workspace=str(repo),
        state_dir=str(state_dir(repo)),
        tools=tool_names,
        agents_md=read_agents_md(repo),
    )
