"""`ctxagent.cli.workspace.find_workspace`: which folder a command works in (issue 15, item 12)."""

from __future__ import annotations

from pathlib import Path

from ctxagent.cli.workspace import find_workspace


def _git(folder: Path) -> Path:
    (folder / ".git").mkdir(parents=True)
    return folder


def test_the_enclosing_git_root_without_repo(tmp_path: Path) -> None:
    root = _git(tmp_path / "proj")
    (root / "src" / "pkg").mkdir(parents=True)
    ws = find_workspace(None, root / "src" / "pkg")
    assert ws.root == root.resolve() and ws.cwd == (root / "src" / "pkg").resolve()
    assert ws.user_dir() == "src/pkg" and not ws.given and ws.notices == ()


def test_at_the_root_the_user_dir_is_none(tmp_path: Path) -> None:
    root = _git(tmp_path / "proj")
    assert find_workspace(None, root).user_dir() is None


def test_a_git_file_counts_as_a_root(tmp_path: Path) -> None:  # worktrees and submodules have a .git file
    root = tmp_path / "wt"
    (root / "lib").mkdir(parents=True)
    (root / ".git").write_text("gitdir: /elsewhere\n", encoding="utf-8")
    assert find_workspace(None, root / "lib").root == root.resolve()


def test_repo_wins_relative_to_the_working_directory(tmp_path: Path) -> None:
    root = _git(tmp_path / "proj")
    (root / "src").mkdir()
    ws = find_workspace("src", root)
    assert ws.root == (root / "src").resolve() and ws.given and ws.notices == ()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert find_workspace(str(elsewhere), root / "src").user_dir() is None  # the user is outside the workspace


def test_a_state_folder_left_in_a_subfolder_is_named(tmp_path: Path) -> None:
    root = _git(tmp_path / "proj")
    (root / "src" / ".ctxagent").mkdir(parents=True)
    [notice] = find_workspace(None, root / "src").notices
    assert "is not used: pass --repo ." in notice and str((root / "src" / ".ctxagent").resolve()) in notice


def test_outside_git_the_working_directory_and_a_parent_state_is_named(tmp_path: Path) -> None:
    (tmp_path / "a" / ".ctxagent").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    ws = find_workspace(None, tmp_path / "a" / "b" / "c")
    assert ws.root == (tmp_path / "a" / "b" / "c").resolve()
    [notice] = ws.notices
    assert f"pass --repo {(tmp_path / 'a').resolve()}" in notice


def test_outside_git_without_state_nothing_is_said(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    assert find_workspace(None, tmp_path / "x").notices == ()


def test_a_symlinked_working_directory_resolves(tmp_path: Path) -> None:
    root = _git(tmp_path / "proj")
    (root / "src").mkdir()
    (tmp_path / "link").symlink_to(root / "src")
    ws = find_workspace(None, tmp_path / "link")
    assert ws.root == root.resolve() and ws.user_dir() == "src"
