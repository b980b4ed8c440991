"""Issue 17, S8: two `ctxagent apply` processes patching one file at the same moment never
lose an update: each patch either applies on top of the other or is refused with a clear
message (the writer lock `.ctxagent/write.lock` around check and write)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROUNDS = 20
BASE = "a = 0\nmiddle = 1\nb = 0\n"
PATCH_A = "*** Begin Patch\n*** Update File: f.py\n@@\n-a = 0\n+a = 1\n*** End Patch\n"
PATCH_B = "*** Begin Patch\n*** Update File: f.py\n@@\n middle = 1\n-b = 0\n+b = 1\n*** End Patch\n"


def _apply(repo: Path, patch: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "ctxagent.cli.main", "apply", "--repo", str(repo), "--yes",
                             str(patch)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes")
def test_s8_two_concurrent_applies_on_one_file_never_lose_an_update(tmp_path: Path) -> None:
    (tmp_path / "a.patch").write_text(PATCH_A)
    (tmp_path / "b.patch").write_text(PATCH_B)
    (tmp_path / "home").mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home"),
           "PYTHONPATH": os.environ.get("PYTHONPATH", str(Path(__file__).resolve().parents[2]))}
    for n in range(ROUNDS):
        repo = tmp_path / f"r{n}"
        repo.mkdir()
        (repo / "f.py").write_text(BASE)
        procs = [_apply(repo, tmp_path / "a.patch", env), _apply(repo, tmp_path / "b.patch", env)]
        results = [(p.wait(timeout=60), *p.communicate()) for p in procs]
        text = (repo / "f.py").read_text()
        applied = {"a": "a = 1\n" in text, "b": "b = 1\n" in text}
        for (code, out, err), name in zip(results, "ab"):
            if code == 0:  # it said it applied: its change must be in the file
                assert applied[name], (n, name, out, err, text)
            else:  # refused: with a message saying so, and its change is not there
                assert not applied[name] and "error:" in err and "nothing was" in err, (n, name, out, err, text)
        assert text.replace("a = 1", "a = 0").replace("b = 1", "b = 0") == BASE
