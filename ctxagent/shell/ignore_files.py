"""The ignore files ripgrep would read, checked before it runs (issue 17 S9).

`risky_ignore_classes` walks what rg would search (no links followed) and names each
class of ignore file that holds a link outside, a special file or a file above the
workspace; the terminal switches that class off (`FLAGS`). Listings are cached per
directory on (device, inode, mtime, ctime) (docs/terminal.md, "Limits and lookups").
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

DOT, VCS, EXCLUDE = "dot", "vcs", "exclude"
NAMES = {".ignore": DOT, ".rgignore": DOT, ".gitignore": VCS}
FLAGS = {DOT: "--no-ignore-dot", VCS: "--no-ignore-vcs", EXCLUDE: "--no-ignore-exclude"}
"""rg flag that stops it reading each class (`--no-ignore-vcs` also stops the exclude file)."""
MAX_DIRS = 50_000
"""A walk over more directories stops and counts every class as risky (rg then reads none)."""
_CACHE_MAX = 200_000


@dataclass(frozen=True)
class _Listing:
    key: tuple[int, int, int, int]
    subdirs: tuple[str, ...]
    hidden_subdirs: tuple[str, ...]
    links: tuple[tuple[str, str], ...]  # (name, class) of ignore files that are links: re-resolved every time
    special: tuple[tuple[str, str], ...]  # (name, class) of ignore files that are neither file nor link
    has_git: bool


_cache: dict[str, _Listing] = {}


def risky_ignore_classes(paths: list[str], root: str, *, hidden: bool, skip: frozenset[str] = frozenset()
                         ) -> dict[str, str]:
    """{class: why} for the ignore files rg would read when searching `paths` (absolute,
    inside the workspace `root`); classes in `skip` (already switched off) are not
    looked for. `hidden`: rg enters hidden directories (`--hidden`, `-uu`)."""
    found: dict[str, str] = {}
    dirs: list[str] = []
    for path in paths:
        real = os.path.realpath(path)
        is_dir = os.path.isdir(real)
        for spelling in {os.path.normpath(path), real}:
            _check_parents(spelling, root, found)
        if is_dir:
            dirs.append(real)
    if not all(c in found or c in skip for c in FLAGS):
        _walk(dirs, root, hidden, found)
    return {c: why for c, why in found.items() if c not in skip}


def _check_parents(path: str, root: str, found: dict[str, str]) -> None:
    """The directories holding `path` (a search path's parent, or a searched file),
    up to `/`: inside the workspace each is checked like a searched directory; any
    ignore file above the workspace is outside it."""
    folder = os.path.dirname(path)
    while True:
        if folder == root or folder.startswith(root + os.sep):
            rel = _rel(folder, root)
            for name, cls in NAMES.items():
                why = _risk(os.path.join(folder, name), root, _join(rel, name))
                if why:
                    found.setdefault(cls, why)
            why = _exclude_risk(folder, root, rel)
            if why:
                found.setdefault(EXCLUDE, why)
        else:
            for name, cls in NAMES.items():
                if os.path.lexists(os.path.join(folder, name)):
                    found.setdefault(cls, f"a {name} above the workspace")
            why = _exclude_risk(folder, root, None)
            if why:
                found.setdefault(EXCLUDE, why)
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def _walk(starts: list[str], root: str, hidden: bool, found: dict[str, str]) -> None:
    stack, seen = list(starts), 0
    while stack:
        folder = stack.pop()
        seen += 1
        if seen > MAX_DIRS:
            for cls in FLAGS:
                found.setdefault(cls, f"more than {MAX_DIRS} directories to check")
            return
        listing = _listing(folder)
        if listing is None:
            continue
        rel = _rel(folder, root) if listing.special or listing.links or listing.has_git else ""
        for name, cls in listing.special:
            found.setdefault(cls, f"{_join(rel, name)} is not a regular file")
        for name, cls in listing.links:
            why = _risk(os.path.join(folder, name), root, _join(rel, name))
            if why:
                found.setdefault(cls, why)
        if listing.has_git:
            why = _exclude_risk(folder, root, rel)
            if why:
                found.setdefault(EXCLUDE, why)
        prefix = folder + os.sep
        stack.extend(prefix + d for d in listing.subdirs)
        if hidden:
            stack.extend(prefix + d for d in listing.hidden_subdirs)


def _listing(folder: str) -> _Listing | None:
    try:
        st = os.lstat(folder)
    except OSError:
        return None
    key = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
    cached = _cache.get(folder)
    if cached is not None and cached.key == key:
        return cached
    subdirs, hidden, links, special, has_git = [], [], [], [], False
    try:
        with os.scandir(folder) as it:
            for entry in it:
                name = entry.name
                if name in NAMES:
                    if entry.is_symlink():
                        links.append((name, NAMES[name]))
                    elif not entry.is_file(follow_symlinks=False):
                        special.append((name, NAMES[name]))
                elif name == ".git":
                    has_git = True
                    if entry.is_dir(follow_symlinks=False):
                        hidden.append(name)  # rg --hidden searches it too
                elif entry.is_dir(follow_symlinks=False):
                    (hidden if name.startswith(".") else subdirs).append(name)
    except OSError:
        return None
    if len(_cache) >= _CACHE_MAX:
        _cache.clear()
    listing = _Listing(key, tuple(subdirs), tuple(hidden), tuple(links), tuple(special), has_git)
    _cache[folder] = listing
    return listing


def _risk(path: str, root: str, shown: str) -> str:
    """Why rg must not read `path` ("" when it may: missing, or resolving to a regular
    file inside the workspace)."""
    if not os.path.lexists(path):
        return ""
    real = os.path.realpath(path)
    if not (real == root or real.startswith(root + os.sep)):
        return f"{shown} leads outside the workspace"
    try:
        mode = os.stat(real).st_mode
    except OSError:
        return ""
    return "" if stat.S_ISREG(mode) else f"{shown} is not a regular file"


def _exclude_risk(folder: str, root: str, rel: str | None) -> str:
    """Why rg must not read the exclude file of a repository at `folder` (`rel`: its
    workspace-relative name, None above the workspace). rg reads `.git/info/exclude`
    through a linked `.git`, and follows a `.git` file (a linked worktree's pointer) to
    its repository's. One outside the workspace is fine while it holds no pattern
    (git's template has comments only), so a worktree or a parent repository passes."""
    git = os.path.join(folder, ".git")
    shown = _join(rel, ".git", "info", "exclude") if rel is not None else "the .git/info/exclude above the workspace"
    if os.path.isdir(git):
        exclude = os.path.join(git, "info", "exclude")
    elif not os.path.lexists(git):
        return ""
    else:
        gitdir = _pointer(git, "gitdir: ")
        if gitdir is None:
            return f"{shown[:-len('/info/exclude')]} is neither a git directory nor a gitdir file"
        gitdir = os.path.join(folder, gitdir)
        exclude = os.path.join(gitdir, _pointer(os.path.join(gitdir, "commondir"), "") or "", "info", "exclude")
    why = _risk(exclude, root, shown)
    if why.endswith("outside the workspace") and not _has_patterns(exclude):
        return ""
    if why and rel is None:
        return f"{shown} holds patterns"
    return why


def _read_small(path: str) -> bytes | None:
    """The first 64 KiB of a regular file (not through a last link), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read(1 << 16) if stat.S_ISREG(os.fstat(f.fileno()).st_mode) else None


def _pointer(path: str, prefix: str) -> str | None:
    """The path a gitdir/commondir file holds after `prefix`; "" when missing; None when
    it is not such a file."""
    if not os.path.lexists(path):
        return ""
    data = _read_small(path)
    text = data.decode("utf-8", errors="surrogateescape").strip() if data is not None else ""
    return text[len(prefix):] if text.startswith(prefix) and len(text) > len(prefix) else None


def _has_patterns(path: str) -> bool:
    data = _read_small(os.path.realpath(path))
    if data is None:
        return True
    return any(line.strip() and not line.startswith(b"#") for line in data.split(b"\n"))


def _join(rel: str, *names: str) -> str:
    """A workspace-relative name for messages (`sub/.gitignore`, `.gitignore` at the root)."""
    return os.path.join(*names) if rel == "." else os.path.join(rel, *names)


def _rel(folder: str, root: str) -> str:
    """`folder` relative to `root` ("." for the root itself)."""
    return "." if folder == root else folder[len(root) + 1:] if folder.startswith(root + os.sep) else folder
