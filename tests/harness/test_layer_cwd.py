"""The system layer for a workspace and the user's working directory below it (issue 15,
item 12): the AGENTS.md chain runs down to the working directory and the layer says where
the user is; outside the workspace or another git repository, the working directory is ignored."""

from __future__ import annotations

from pathlib import Path

from ctxagent.harness.layer import build_system_layer


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root rule\n", encoding="utf-8")
    (root / "src" / "AGENTS.md").write_text("src rule\n", encoding="utf-8")
    (root / "src" / "pkg" / "AGENTS.md").write_text("pkg rule\n", encoding="utf-8")
    return root


def test_the_chain_runs_down_to_the_working_directory(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    layer = build_system_layer(root, cwd=root / "src")
    text = layer.text()
    assert "root rule" in text and "src rule" in text and "pkg rule" not in text
    assert layer.user_dir == "src" and "started ctxagent in the folder `src/`" in text


def test_without_a_working_directory_only_the_root_file(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    layer = build_system_layer(root)
    assert "src rule" not in layer.text() and layer.user_dir is None and "Where the user is" not in layer.text()


def test_a_working_directory_outside_the_workspace_is_ignored(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "AGENTS.md").write_text("other rule\n", encoding="utf-8")
    layer = build_system_layer(root / "src", cwd=tmp_path / "other")
    assert "other rule" not in layer.text() and layer.user_dir is None


def test_a_nested_git_repository_is_not_crossed(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "vendor" / "lib" / ".git").mkdir(parents=True)
    (root / "vendor" / "lib" / "AGENTS.md").write_text("vendored rule\n", encoding="utf-8")
    layer = build_system_layer(root, cwd=root / "vendor" / "lib")
    assert "vendored rule" not in layer.text() and layer.user_dir is None
