"""Names the file system cannot hold are refused clearly; every name it can hold works (breaker F6).

Before: a 300-byte name crashed `ctxagent apply` (exit 70, OSError ENAMETOOLONG from
planning), and names of 241-254 bytes passed planning but could never be written (the
temporary file `.NAME.xxxxxxxx.tmp` was over 255 bytes). Limits are in bytes (UTF-8).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxagent.errors import PatchError
from ctxagent.patch import apply_patch_text
from ctxagent.patch.paths import NAME_MAX, PATH_MAX
from tests.support.cli import invoke


def P(body: str) -> str:
    return f"*** Begin Patch\n{body}*** End Patch\n"


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    return root


@pytest.mark.parametrize("size", [1, 200, 241, 250, 254, 255])
def test_F6_every_name_up_to_255_bytes_can_be_added_updated_and_moved(ws: Path, size: int) -> None:
    name = "n" * size
    apply_patch_text(P(f"*** Add File: {name}\n+one\n"), ws)
    assert (ws / name).read_text() == "one\n"
    apply_patch_text(P(f"*** Update File: {name}\n@@\n-one\n+two\n"), ws)
    moved = "m" * size
    apply_patch_text(P(f"*** Update File: {name}\n*** Move to: {moved}\n@@\n-two\n+three\n"), ws)
    assert (ws / moved).read_text() == "three\n" and not (ws / name).exists()
    assert not [p for p in listing(ws) if p.endswith(".tmp")]


@pytest.mark.parametrize("name", ["é" * 127, "名" * 85, "d/" + "n" * 255])
def test_F6_multibyte_and_nested_names_at_the_limit_work(ws: Path, name: str) -> None:
    assert max(len(os.fsencode(part)) for part in name.split("/")) <= NAME_MAX
    apply_patch_text(P(f"*** Add File: {name}\n+x\n"), ws)
    assert (ws / name).read_text() == "x\n"


LONG = {"ascii_256": "n" * 256, "ascii_300": "n" * 300, "utf8_258": "名" * 86, "folder_300": "d" * 300 + "/a.txt"}


@pytest.mark.parametrize("label", sorted(LONG))
@pytest.mark.parametrize("op", ["add", "update", "delete", "move_to"])
def test_F6_a_name_over_255_bytes_is_refused_clearly_whatever_the_operation(ws: Path, label: str, op: str) -> None:
    name = LONG[label]
    body = {"add": f"*** Add File: {name}\n+x\n", "update": f"*** Update File: {name}\n@@\n-a\n+b\n",
            "delete": f"*** Delete File: {name}\n",
            "move_to": f"*** Update File: a.txt\n*** Move to: {name}\n@@\n-a\n+b\n"}[op]
    before = listing(ws)
    with pytest.raises(PatchError, match=r"file name too long \(max 255 bytes per component\)") as caught:
        apply_patch_text(P(body), ws)
    assert caught.value.path == name
    assert listing(ws) == before and (ws / "a.txt").read_text() == "a\n"


def test_F6_a_path_over_path_max_is_refused_clearly(ws: Path) -> None:
    name = "/".join(["d" * 250] * (PATH_MAX // 251 + 1)) + "/f.txt"
    with pytest.raises(PatchError, match=f"path too long \\(max {PATH_MAX} bytes\\)"):
        apply_patch_text(P(f"*** Add File: {name}\n+x\n"), ws)
    assert listing(ws) == ["a.txt"]


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))


@pytest.mark.usefixtures("isolated")
def test_F6_ctxagent_apply_refuses_a_long_name_with_one_line_not_a_crash(ws: Path, tmp_path: Path) -> None:
    patch = tmp_path / "long.patch"
    patch.write_text(P(f"*** Add File: {'n' * 300}\n+n\n"))
    out = invoke(["apply", str(patch), "--repo", str(ws), "--yes"])
    assert out.exit_code == 1 and "crashed" not in out.output
    assert "file name too long (max 255 bytes per component)" in out.output
    assert listing(ws) == ["a.txt"]


@pytest.mark.usefixtures("isolated")
def test_F6_ctxagent_apply_adds_a_254_byte_name(ws: Path, tmp_path: Path) -> None:
    patch = tmp_path / "ok.patch"
    patch.write_text(P(f"*** Add File: {'n' * 254}\n+n\n"))
    out = invoke(["apply", str(patch), "--repo", str(ws), "--yes"])
    assert out.exit_code == 0, out.output
    assert (ws / ("n" * 254)).read_text() == "n\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads through any permission bits")
def test_F6_other_file_system_errors_while_planning_are_patch_errors(ws: Path) -> None:
    locked = ws / "locked"
    locked.mkdir()
    (locked / "f.txt").write_text("a\n")
    locked.chmod(0)
    try:
        with pytest.raises(PatchError) as caught:
            apply_patch_text(P("*** Update File: locked/f.txt\n@@\n-a\n+b\n"), ws)
        assert caught.value.path == "locked/f.txt" and "nothing was changed" in str(caught.value).lower()
    finally:
        locked.chmod(0o755)
