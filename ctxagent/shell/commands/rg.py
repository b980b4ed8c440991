"""rg for the terminal tool: the ignore files it may read (issue 17 S9).

rg follows a symbolic link to an ignore file and prints lines it cannot parse, so each
class of ignore file that holds one rg must not read (`shell/ignore_files.py`) is
switched off with its flag, and a note says which and why. Flags the model gave that
already switch a class off are respected (no check for it).
"""

from __future__ import annotations

from ctxagent.shell.flags import Scan
from ctxagent.shell.ignore_files import DOT, EXCLUDE, FLAGS, VCS, risky_ignore_classes
from ctxagent.shell.paths import PathContext

_SKIPS = {"--no-ignore": (DOT, VCS, EXCLUDE), "-u": (DOT, VCS, EXCLUDE), "--unrestricted": (DOT, VCS, EXCLUDE),
          "--no-ignore-dot": (DOT,), "--no-ignore-vcs": (VCS, EXCLUDE), "--no-ignore-exclude": (EXCLUDE,)}
_HIDDEN = ("--hidden", "-.", "-u", "--unrestricted")


def rg_ignore_flags(result: Scan, paths: list[str], ctx: PathContext, notes: list[str] | None) -> list[str]:
    """The `--no-ignore-*` flags to add for an rg searching `paths` (absolute) with the
    scanned flags `result`; appends one note per added flag to `notes`."""
    given = {flag for flag, _ in result.flags}
    skip = frozenset(cls for flag in given for cls in _SKIPS.get(flag, ()))
    if skip >= {DOT, VCS, EXCLUDE}:
        return []
    risky = risky_ignore_classes(paths, ctx.root, hidden=bool(given & set(_HIDDEN)), skip=skip)
    if VCS in risky:
        risky.pop(EXCLUDE, None)  # --no-ignore-vcs covers the exclude file too
    names = {DOT: ".ignore or .rgignore", VCS: ".gitignore or .git/info/exclude", EXCLUDE: ".git/info/exclude"}
    for cls, why in risky.items():
        if notes is not None:
            notes.append(f"[rg ran with {FLAGS[cls]}: {why}, so it read no {names[cls]} file]")
    return [FLAGS[cls] for cls in risky]
