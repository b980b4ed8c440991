"""The first snapshot of a repository, fast: every file into one pack, then the index.

`git add` of 20,000 files writes 20,000 loose objects (a file each; most of the time goes
to creating them). Here the files are streamed to `git fast-import`, which writes a single
pack; the shadow index is then filled from the known object ids and refreshed, so its
stat data lets the next snapshot rehash only what changed.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from ctxagent.exec.shadow_git import ShadowGit

#: Bytes of file content sent to fast-import per write.
_CHUNK = 1 << 20


def import_files(git: ShadowGit, repo: Path, paths: list[str]) -> list[str]:
    """Store `paths` (files of `repo`) in one pack and put them in the shadow index.

    Returns the paths that vanished or could not be read meanwhile (left out). Raises
    GitFailed or StorageError as ShadowGit.run does."""
    entries: list[bytes] = []
    missing: list[str] = []
    proc = git._start(("fast-import", "--quiet", "--depth=0"), b"", None)  # no deltas: 20% faster, same size
    try:
        for path in paths:
            blob = _read(repo / path)
            if blob is None:
                missing.append(path)
                continue
            mode, data = blob
            oid = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
            proc.stdin.write(b"blob\ndata %d\n" % len(data))
            for start in range(0, len(data), _CHUNK):
                proc.stdin.write(data[start:start + _CHUNK])
            proc.stdin.write(b"\n")
            entries.append(b"%s %s\t%s\0" % (mode, oid.encode(), os.fsencode(path)))
        proc.stdin.close()
    except BrokenPipeError:
        pass  # fast-import died; _finish reports why
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    proc.stdin = None  # closed above; communicate() must not write or flush it again
    git._finish(proc, ("fast-import",), None)
    if entries:
        git.run("update-index", "--add", "-z", "--index-info", input=b"".join(entries))
        git.run("update-index", "-q", "--refresh")
    return missing


def _read(path: Path) -> tuple[bytes, bytes] | None:
    """(git mode, content) of a file or symbolic link; None when it cannot be read."""
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            return b"120000", os.fsencode(os.readlink(path))
        if not stat.S_ISREG(info.st_mode):
            return None
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return (b"100755" if info.st_mode & stat.S_IXUSR else b"100644"), data


