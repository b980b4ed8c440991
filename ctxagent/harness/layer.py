"""The system layer the harness adds: profile sections, the AGENTS.md chain, the skill catalog.

`build_system_layer(repo, options)` loads them all (every read tolerant: a missing or
unreadable file is skipped); `SystemLayer.text()` renders them (`prompts/layer.md`), and
is rendered again when a nested AGENTS.md joins the chain. `loaded_memory_files` lists
what was loaded, for `/memory`. The repository's files are content, not configuration:
they cannot change tools, approval or limits (docs/harness.md, "Trust").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ctxagent.harness.catalog import catalog_budget, render_catalog
from ctxagent.harness.chain import CHAIN_MAX_BYTES, DEFAULT_FALLBACKS, Chain, git_root, load_chain
from ctxagent.harness.files import LoadedFile
from ctxagent.harness.profile import PROFILE_MAX_BYTES, load_profile, render_profile
from ctxagent.harness.skills import Skill, SkillWarning, discover_skills
from ctxagent.templates import prompts

_PROMPTS = prompts("ctxagent.harness")


@dataclass(frozen=True)
class HarnessOptions:
    """Where and how much: `user_dir` (~/.config/ctxagent), `home` (for ~/.agents/skills and
    `@~/` imports), fallback names, byte caps, and the context window (the catalog's budget)."""

    user_dir: Path | None = None
    home: Path | None = None
    fallbacks: tuple[str, ...] = DEFAULT_FALLBACKS
    agents_max_bytes: int = CHAIN_MAX_BYTES
    profile_max_bytes: int = PROFILE_MAX_BYTES
    context_window: int | None = None


@dataclass
class SystemLayer:
    """What the harness loaded for one workspace (see the module doc)."""

    repo: Path
    profile: list[LoadedFile] = field(default_factory=list)
    chain: Chain = field(default_factory=Chain)
    skills: list[Skill] = field(default_factory=list)
    skill_warnings: list[SkillWarning] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    catalog_tokens: int = 0
    user_dir: str | None = None
    """The folder below `repo` the user started in (POSIX, relative), or None for `repo` itself."""

    def files(self) -> list[LoadedFile]:
        """Every loaded file: profile files, then the chain (user file, root down, nested)."""
        return [*self.profile, *self.chain.files]

    def catalog(self) -> str:
        """The skill catalog text ("" without skills)."""
        return render_catalog(self.skills, self.catalog_tokens, workspace=self.repo)[0]

    def text(self) -> str:
        """The layer as system-prompt text ("" when nothing was found)."""
        return _PROMPTS.render("layer", profile=render_profile(self.profile), chain=self.chain.text(),
                               catalog=self.catalog(), user_dir=self.user_dir)

    def all_warnings(self) -> list[str]:
        """Cuts, refused imports and skipped skills, one line each."""
        return [*self.warnings, *self.chain.warnings, *map(str, self.skill_warnings)]


def build_system_layer(repo: Path, options: HarnessOptions | None = None, *, cwd: Path | None = None) -> SystemLayer:
    """Load profile files, the AGENTS.md chain and the skills for `repo` (see the module doc).
    `cwd`: the user's working directory; inside `repo` and the same git repository, the chain
    runs down to it (Codex's lookup) and the layer names it as `user_dir`."""
    options = options or HarnessOptions()
    repo = Path(repo).resolve()
    here = _user_folder(repo, cwd)
    profile, warnings = load_profile(repo, options.user_dir, max_bytes=options.profile_max_bytes)
    chain = load_chain(here or repo, options.user_dir, fallbacks=options.fallbacks,
                       max_bytes=options.agents_max_bytes, home=options.home)
    skills, skill_warnings = discover_skills(repo, options.home, user_dir=options.user_dir)
    return SystemLayer(repo, profile, chain, skills, skill_warnings, warnings, catalog_budget(options.context_window),
                       user_dir=here.relative_to(repo).as_posix() if here is not None else None)


def _user_folder(repo: Path, cwd: Path | None) -> Path | None:
    """`cwd` resolved when it is strictly below `repo` in the same git repository, else None."""
    if cwd is None:
        return None
    here = Path(cwd).resolve()
    if repo not in here.parents or git_root(here) != git_root(repo):
        return None
    return here


def loaded_memory_files(layer: SystemLayer) -> list[tuple[Path, str, int, bool]]:
    """(path, kind, size in bytes, cut) of every loaded profile and AGENTS.md-chain file, in
    the order they reach the model; kind is "profile:<Tag>", "agents", or "nested"."""
    return [(f.path, f"profile:{f.tag}" if f.kind == "profile" else f.kind, f.size, f.cut) for f in layer.files()]
