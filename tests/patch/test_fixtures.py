"""The portable fixture scenarios in tests/fixtures/patch/<NNN_behaviour>/.

Each folder holds `input/` (the workspace before), `patch.txt` (sent as is: its bytes
decoded as UTF-8, CRLF kept) and `expected/` (the whole workspace after, compared byte
for byte; `.ctxagent/` backups and `.keep` placeholders are ignored). With `error.txt`,
the patch must be refused with an error containing that text, and `expected/` equals
`input/` (all or nothing). See tests/fixtures/patch/README.md.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctxagent.errors import PatchError
from ctxagent.patch import apply_patch_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "patch"
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def tree(root: Path) -> dict[str, bytes]:
    """{relative POSIX path: bytes} of every file under `root`, `.ctxagent/` excluded."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] == ".ctxagent" or path.name == ".keep" or not path.is_file():
            continue
        out[rel.as_posix()] = path.read_bytes()
    return out


def test_fixture_folder_is_complete() -> None:
    assert len(CASES) >= 40
    for name in CASES:
        case = FIXTURES / name
        assert (case / "input").is_dir() and (case / "expected").is_dir(), name
        assert (case / "patch.txt").is_file(), name
        if (case / "error.txt").exists():
            assert tree(case / "input") == tree(case / "expected"), f"{name}: a rejection changes nothing"


@pytest.mark.parametrize("name", CASES)
def test_fixture(name: str, tmp_path: Path) -> None:
    case = FIXTURES / name
    work = tmp_path / "ws"
    shutil.copytree(case / "input", work, symlinks=True)
    patch = (case / "patch.txt").read_bytes().decode("utf-8")
    error_file = case / "error.txt"
    if error_file.exists():
        with pytest.raises(PatchError) as info:
            apply_patch_text(patch, work)
        assert error_file.read_text(encoding="utf-8").strip() in str(info.value)
    else:
        apply_patch_text(patch, work)
    assert tree(work) == tree(case / "expected")
