"""The AGENTS.md chain, Codex's lookup: the user's file, then one file per directory.

From the git root down to the working directory, one file a folder (`AGENTS.override.md`,
`AGENTS.md`, fallback names); `@path` imports expanded (`ctxagent.harness.imports`); the
whole cut at `max_bytes` (32 KiB). Reference: docs/harness.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ctxagent.harness.files import LoadedFile, cut_bytes, read_text
from ctxagent.harness.imports import expand_imports

OVERRIDE_NAME = "AGENTS.override.md"
AGENTS_NAME = "AGENTS.md"
#: Names tried after AGENTS.override.md and AGENTS.md in each folder (`[harness] fallback_names`).
DEFAULT_FALLBACKS: tuple[str, ...] = ("CLAUDE.md", "GEMINI.md")
#: Bytes of the whole chain sent to the model (Codex's project_doc_max_bytes default).
CHAIN_MAX_BYTES = 32 * 1024


@dataclass
class Chain:
    """The chain as loaded: `files` root first (the user's file leads), `warnings`
    (a cut, refused imports), `root` (git root or working directory), `used` bytes."""

    files: list[LoadedFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    root: Path | None = None
    used: int = 0
    max_bytes: int = CHAIN_MAX_BYTES

    def text(self) -> str:
        """Every file's text, each after a `(from PATH)` line, joined by blank lines."""
        return "\n\n".join(f"(from {f.path})\n{f.text}" for f in self.files)


def git_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding `.git` (folder or file), or None."""
    here = Path(os.path.realpath(start))
    for folder in (here, *here.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def candidate_names(fallbacks: Sequence[str] = DEFAULT_FALLBACKS) -> list[str]:
    """The names tried in each folder, in order, without repeats or empty names."""
    return list(dict.fromkeys([OVERRIDE_NAME, AGENTS_NAME, *(n for n in fallbacks if n)]))


def pick(folder: Path, names: Sequence[str]) -> Path | None:
    """The first of `names` that exists in `folder` as a file (or a link to one)."""
    for name in names:
        path = Path(folder) / name
        if os.path.isfile(path):
            return path
    return None


def chain_dirs(cwd: Path) -> tuple[Path, list[Path]]:
    """(root, the folders from the git root down to `cwd`); root is `cwd` without git."""
    here = Path(os.path.realpath(cwd))
    root = git_root(here)
    if root is None:
        return here, [here]
    parts = here.relative_to(root).parts
    return root, [root.joinpath(*parts[:i]) for i in range(len(parts) + 1)]


def user_file(user_dir: Path | None) -> Path | None:
    """The user's AGENTS.override.md when it has text, else their AGENTS.md, else None."""
    if user_dir is None:
        return None
    for name in (OVERRIDE_NAME, AGENTS_NAME):
        got = read_text(Path(user_dir) / name)
        if got is not None and got[0].strip():
            return Path(user_dir) / name
    return None


def load_chain(cwd: Path, user_dir: Path | None = None, *, fallbacks: Sequence[str] = DEFAULT_FALLBACKS,
               max_bytes: int = CHAIN_MAX_BYTES, home: Path | None = None) -> Chain:
    """Load the chain for working directory `cwd` (see the module doc)."""
    root, folders = chain_dirs(cwd)
    chain = Chain(root=root, max_bytes=max_bytes)
    if max_bytes <= 0:  # `agents_max_bytes = 0`: no chain at all, and nothing to warn about
        return chain
    names = candidate_names(fallbacks)
    mine = user_file(user_dir)
    if mine is not None:
        add_file(chain, mine, "agents", "user", Path(user_dir), home)
    for folder in folders:
        path = pick(folder, names)
        if path is not None:
            add_file(chain, path, "agents", "repo", root, home)
    return chain


def add_file(chain: Chain, path: Path, kind: str, scope: str, root: Path, home: Path | None) -> LoadedFile | None:
    """Read `path`, expand its imports (confined to `root`), cut it to what is left of the
    chain's budget, and append it; None when it is empty, unreadable or no budget is left."""
    got = read_text(path)
    left = chain.max_bytes - chain.used
    if got is None or not got[0].strip() or left <= 0:
        if got is not None and got[0].strip() and left <= 0:
            _warn_cut(chain, path, got[1])
        return None
    text, notes = expand_imports(got[0].strip(), path, root, home=home)
    chain.warnings.extend(notes)
    text, cut = cut_bytes(text, left, "the AGENTS.md chain")
    loaded = LoadedFile(path, kind, scope, got[1], cut, text)
    chain.files.append(loaded)
    chain.used += min(len(text.encode("utf-8")), left)
    if cut:
        _warn_cut(chain, path, got[1])
    return loaded


def _warn_cut(chain: Chain, path: Path, size: int) -> None:
    if not any("AGENTS.md chain" in w for w in chain.warnings):
        chain.warnings.append(f"the AGENTS.md chain is cut at {chain.max_bytes:,} bytes from {path} on "
                              f"({size:,} bytes); split the guidance or raise [harness] agents_max_bytes")
