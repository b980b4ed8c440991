"""`ctxagent init`'s starting profile files: commented templates, never over an existing file.

Each template (`prompts/init_<Name>.md`) is our own text inside `<!-- ... -->`, which the
profile loader does not send (`ctxagent.harness.profile.strip_comments`), so a fresh file
costs no tokens until its owner writes in it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ctxagent.harness.profile import PROFILE_FILES
from ctxagent.storage.files import atomic_write_bytes


def starting_text(name: str) -> str:
    """The commented starting version of profile file `name` (e.g. "Agent.md")."""
    return resources.files("ctxagent.harness").joinpath("prompts", f"init_{name}").read_text(encoding="utf-8")


def init_profile(folder: Path) -> list[tuple[Path, bool]]:
    """Write each profile file missing from `folder`; (path, written) per file, False when it
    existed and was kept as is. Raises StorageError when the folder cannot be written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name, _ in PROFILE_FILES:
        path = folder / name
        written = False if path.exists() or path.is_symlink() else atomic_write_bytes(
            path, starting_text(name).encode("utf-8"), replace=False)
        out.append((path, written))
    return out
