"""`/memory` (the profile, memory and AGENTS.md files in the system prompt) and `/skills`.

Both read the running agent's harness layer (`agent.layer`, `ctxagent.harness.layer`), so
they show what the model gets, nested AGENTS.md files found during the session included.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from ctxagent.agent.rules import harness_options
from ctxagent.cli.slash.context import ChatContext
from ctxagent.harness.layer import build_system_layer
from ctxagent.harness.skills import discover_skills, skill_roots
from ctxagent.storage.files import state_dir


def _layer(agent: Any) -> Any:
    """The agent's SystemLayer, or one loaded now with default options (an agent built without one)."""
    layer = getattr(agent, "layer", None)
    if layer is None:
        layer = build_system_layer(Path(agent.session.repo), harness_options(agent.settings))
    return layer


def _memory(ctx: ChatContext, arg: str) -> None:
    files = _layer(ctx.agent).files()
    if not files:
        ctx.console.print(f"no profile, memory or AGENTS.md files loaded for {ctx.repo} (see docs/harness.md)",
                          markup=False, soft_wrap=True)
    for f in files:
        kind = f"profile {f.tag}" if f.kind == "profile" else f.kind
        cut = f"; cut: {len(f.text.encode()):,} bytes sent" if f.cut else ""
        ctx.console.print(f"  {kind:<28} {f.path}  {f.size:,} bytes ({f.scope}){cut}", markup=False, soft_wrap=True)
    db = state_dir(ctx.repo) / "memory.db"
    if db.exists():
        ctx.console.print(f"  long-term memory {db} ({db.stat().st_size:,} bytes; searched per request, "
                          "see `ctxagent memory list`)", markup=False, soft_wrap=True)


def _skills(ctx: ChatContext, arg: str) -> None:
    layer = _layer(ctx.agent)
    skills, warnings = (layer.skills, layer.skill_warnings) if layer is not None else discover_skills(ctx.repo, Path(os.environ.get("HOME") or Path.home()))
    for skill in skills:
        ctx.console.print(f"  {skill.name:<24} {skill.path} ({skill.scope}): {skill.description[:80]}",
                          markup=False, soft_wrap=True)
    if not skills:
        options = harness_options(ctx.agent.settings)
        searched = ", ".join(str(root) for root, _ in skill_roots(ctx.repo, options.home, options.user_dir))
        ctx.console.print(f"no skills found (searched: {searched})", markup=False, soft_wrap=True)
    for warning in warnings:
        ctx.console.print(str(warning), style="yellow", markup=False, soft_wrap=True)


def register_slash_commands(register: Callable[..., Any]) -> None:
    """Register /memory and /skills."""
    register("memory", "the profile, memory and AGENTS.md files in the system prompt, with their sizes", _memory)
    register("skills", "the skills the agent has, and where it looked", _skills)
