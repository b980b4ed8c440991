"""Patch backups of older ctxagent versions: `.ctxagent/backups/<stamp>/<path>` (originals).

Patches now record checkpoints instead; these folders stay readable so `ctxagent undo`
can still put their originals back when no checkpoint exists. A backup holds only files
that existed before the patch: files it created are not known to it and stay.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ctxagent.exec.restore import FileRestore, write_files
from ctxagent.storage.files import TMP_PREFIX, state_dir


def backup_folders(repo: Path) -> list[Path]:
    """The backup folders of `repo`, newest first (empty when there are none)."""
    root = state_dir(Path(repo)) / "backups"
    if not root.is_dir() or root.is_symlink():
        return []
    return sorted((p for p in root.iterdir() if p.is_dir() and not p.is_symlink()), key=lambda p: p.name, reverse=True)


def backup_files(folder: Path) -> list[str]:
    """Repository-relative paths of the originals kept in `folder`, sorted."""
    out = []
    for base, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(base, d))]
        for name in names:
            full = Path(base) / name
            if not name.startswith(TMP_PREFIX) and full.is_file() and not full.is_symlink():
                out.append(full.relative_to(folder).as_posix())
    return sorted(out)


def restore_backup(repo: Path, folder: Path) -> list[str]:
    """Copy every original in `folder` back over the working tree (all or nothing, through
    the patch journal); returns the paths. Raises CheckpointError when a write fails."""
    paths = backup_files(folder)
    wanted = {}
    for path in paths:
        info = os.stat(folder / path)
        wanted[path] = ("100755" if info.st_mode & stat.S_IXUSR else "100644", (folder / path).read_bytes())
    write_files(Path(repo), [FileRestore(p, "restore") for p in paths], wanted)
    return paths
