"""Path rules of plan_patch: nothing escapes the workspace (P05), no .git/.ctxagent (P06)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxagent.errors import PatchError
from ctxagent.patch import apply_patch_text
from tests.patch.conftest import envelope as P
from tests.patch.conftest import snapshot


def refused(text: str, ws: Path) -> str:
    before = snapshot(ws)
    with pytest.raises(PatchError) as info:
        apply_patch_text(text, ws)
    assert snapshot(ws) == before, "a refused patch must not change any file"
    return str(info.value)


# --- P05: nothing escapes the workspace, nothing half-applies -------------------------

@pytest.fixture
def escape_ws(tmp_path: Path) -> tuple[Path, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    (ws / "out").symlink_to(outside)
    return ws, outside


def _outside_untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "keep\n"


def test_P05_add_with_dotdot_is_refused(escape_ws) -> None:
    ws, outside = escape_ws
    assert "'..'" in refused(P("*** Add File: ../outside/pwn.txt\n+x\n"), ws)
    _outside_untouched(outside)


def test_P05_add_with_absolute_path_is_refused(escape_ws) -> None:
    ws, outside = escape_ws
    assert "absolute" in refused(P(f"*** Add File: {outside / 'pwn.txt'}\n+x\n"), ws)
    _outside_untouched(outside)


def test_P05_update_through_symlink_is_refused(escape_ws) -> None:
    ws, outside = escape_ws
    assert "outside the workspace" in refused(P("*** Update File: out/keep.txt\n@@\n-keep\n+pwn\n"), ws)
    _outside_untouched(outside)


def test_P05_delete_with_dotdot_is_refused(escape_ws) -> None:
    ws, outside = escape_ws
    refused(P("*** Delete File: ../outside/keep.txt\n"), ws)
    _outside_untouched(outside)


def test_P05_add_through_symlinked_folder_is_refused(escape_ws) -> None:
    ws, outside = escape_ws
    refused(P("*** Add File: out/new.txt\n+x\n"), ws)
    _outside_untouched(outside)


def test_P05_move_destination_escaping_is_refused(escape_ws) -> None:
    ws, outside = escape_ws
    (ws / "a.txt").write_text("a\n")
    refused(P("*** Update File: a.txt\n*** Move to: out/a.txt\n"), ws)
    _outside_untouched(outside)


def test_P05_valid_first_op_then_escape_creates_nothing(escape_ws) -> None:
    ws, outside = escape_ws
    refused(P("*** Add File: ok2.txt\n+ok\n*** Add File: ../outside/pwn.txt\n+x\n"), ws)
    assert not (ws / "ok2.txt").exists()
    _outside_untouched(outside)


@pytest.mark.parametrize("path, why", [
    ("a\x00b.txt", "NUL"), ("C:/x.txt", "absolute"), ("~/x.txt", "absolute"), ("\\x.txt", "absolute"),
    ("dir\\x.txt", "'\\'"), (".", "workspace folder itself"), ("a/../..", "'..'"), ("newdir/", "ends with '/'"),
])
def test_bad_paths_are_refused(ws: Path, path: str, why: str) -> None:
    assert why in refused(P(f"*** Add File: {path}\n+x\n"), ws)


def test_deleting_a_symlink_is_refused_and_its_target_kept(ws: Path) -> None:
    (ws / "real.txt").write_text("a\n")
    (ws / "link.txt").symlink_to("real.txt")
    assert "symbolic link" in refused(P("*** Delete File: link.txt\n"), ws)
    assert (ws / "real.txt").read_text() == "a\n" and (ws / "link.txt").is_symlink()


def test_dotdot_that_stays_inside_is_fine(ws: Path) -> None:
    (ws / "src").mkdir()
    apply_patch_text(P("*** Add File: src/../top.txt\n+x\n"), ws)
    assert (ws / "top.txt").read_text() == "x\n"


def test_symlink_inside_workspace_writes_through_to_its_target(ws: Path) -> None:
    (ws / "real.txt").write_text("a\n")
    (ws / "link.txt").symlink_to("real.txt")
    result = apply_patch_text(P("*** Update File: link.txt\n@@\n-a\n+b\n"), ws)
    assert (ws / "real.txt").read_text() == "b\n" and (ws / "link.txt").is_symlink()
    assert result.files()[0]["path"] == "real.txt"


# --- P06: repository metadata and ctxagent state -------------------------------------

@pytest.mark.parametrize("header", [
    "*** Update File: .git/config\n@@\n-[core]\n+[evil]\n",
    "*** Add File: .git/hooks/pre-commit\n+#!/bin/sh\n",
    "*** Delete File: .git/HEAD\n",
    "*** Add File: sub/.GIT/config\n+x\n",
    "*** Add File: .ctxagent/config.toml\n+x\n",
    "*** Add File: g/config\n+x\n",
])
def test_P06_git_and_ctxagent_folders_are_refused(ws: Path, header: str) -> None:
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / "g").symlink_to(".git")  # reaching .git through a symlink is refused too
    assert "may not change" in refused(P(header), ws)
