"""Keeping the shadow checkpoint repository compact: repacks of its loose objects, like `git gc --auto`.

Automatic gc is off in the shadow repository (it would pack refs and run in the
background), so `compact_if_due` does the part that matters under the store's lock: when
more than `LOOSE_LIMIT` loose objects have piled up, they go into one pack (`repack -d`)
and unreachable ones older than `PRUNE_GRACE` are dropped; past `PACK_LIMIT` packs, all
are merged (`repack -A -d`). `compact` does the full job after a prune. Refs are never
packed (the store reads its head ref file directly). Reference: docs/checkpoints.md.
"""

from __future__ import annotations

import logging
import os

from ctxagent.errors import StorageError
from ctxagent.exec.shadow_git import ShadowGit

log = logging.getLogger(__name__)

#: Loose objects (estimated from one of git's 256 fan-out folders) that trigger a repack.
LOOSE_LIMIT = 2000
#: Packs that trigger merging them all into one.
PACK_LIMIT = 20
#: Unreachable loose objects younger than this are kept by the periodic repack (a restore
#: being confirmed in another process may still use the tree it wrote).
PRUNE_GRACE = "1.hour.ago"
_SAMPLE = "17"  # the folder git's own `gc --auto` counts


def loose_estimate(git: ShadowGit) -> int:
    """Loose objects in the store, estimated from one fan-out folder (int; 0 when none)."""
    try:
        return len(os.listdir(git.git_dir / "objects" / _SAMPLE)) * 256
    except OSError:
        return 0


def pack_count(git: ShadowGit) -> int:
    """Packs in the store (int)."""
    try:
        return sum(1 for name in os.listdir(git.git_dir / "objects" / "pack") if name.endswith(".pack"))
    except OSError:
        return 0


def compact_if_due(git: ShadowGit) -> bool:
    """Repack when loose objects or packs passed their limit; True when it ran. Called under
    the store's lock; a failure is logged, never raised (the checkpoint itself is recorded)."""
    loose, packs = loose_estimate(git) > LOOSE_LIMIT, pack_count(git) >= PACK_LIMIT
    if not (loose or packs):
        return False
    try:
        git.run("repack", "-d", "-q", *(["-A"] if packs else []))  # -A: unreachable ones loosened, pruned below
        git.run("prune", f"--expire={PRUNE_GRACE}")
    except StorageError as exc:
        log.warning("could not repack the checkpoint store %s: %s", git.git_dir, exc)
        return False
    return True


def compact(git: ShadowGit) -> None:
    """Everything in one pack, every unreachable object dropped now (after a prune, under the
    store's lock). Raises StorageError (GitFailed) when git fails: the store stays usable."""
    git.run("reflog", "expire", "--expire=now", "--all")
    git.run("repack", "-a", "-d", "-q")
    git.run("prune", "--expire=now")
