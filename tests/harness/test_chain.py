"""The AGENTS.md chain: Codex's lookup (user file, git root down to the working directory,
one file per folder: override, AGENTS.md, fallbacks), the 32 KiB cut, and `@path` imports."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxagent.harness.chain import load_chain
from ctxagent.harness.imports import MAX_DEPTH, expand_imports
from ctxagent.harness.nested import NestedRules


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """tmp/proj (a git root: `.git` is a file, as in a worktree) with proj/a/b the working directory."""
    root = tmp_path / "proj"
    (root / "a" / "b").mkdir(parents=True)
    (root / ".git").write_text("gitdir: /elsewhere\n")
    return root


def _texts(chain) -> list[str]:
    return [f.text for f in chain.files]


def test_user_file_then_root_down_to_the_working_directory(project: Path, tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    (user / "AGENTS.md").write_text("user rule")
    (project / "AGENTS.md").write_text("root rule")
    (project / "a" / "CLAUDE.md").write_text("a rule")
    (project / "a" / "b" / "AGENTS.md").write_text("b rule")
    chain = load_chain(project / "a" / "b", user)
    assert _texts(chain) == ["user rule", "root rule", "a rule", "b rule"]
    assert [f.scope for f in chain.files] == ["user", "repo", "repo", "repo"]
    assert chain.text().index("root rule") < chain.text().index("b rule")


def test_one_file_per_folder_override_first_then_agents_then_fallbacks(project: Path, tmp_path: Path) -> None:
    (project / "AGENTS.override.md").write_text("override")
    (project / "AGENTS.md").write_text("agents")
    (project / "CLAUDE.md").write_text("claude")
    (project / "a" / "CLAUDE.md").write_text("claude a")
    (project / "a" / "GEMINI.md").write_text("gemini a")
    assert _texts(load_chain(project / "a")) == ["override", "claude a"]
    assert _texts(load_chain(project / "a", fallbacks=["GEMINI.md"])) == ["override", "gemini a"]
    assert _texts(load_chain(project / "a", fallbacks=[])) == ["override"]


def test_the_user_override_wins_when_it_has_text(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    (user / "AGENTS.md").write_text("plain")
    (user / "AGENTS.override.md").write_text("   \n")
    assert _texts(load_chain(tmp_path, user)) == ["plain"], "an empty override is skipped (first non-empty)"
    (user / "AGENTS.override.md").write_text("override")
    assert _texts(load_chain(tmp_path, user)) == ["override"]


def test_an_empty_project_file_hides_the_others_in_its_folder(project: Path) -> None:
    (project / "AGENTS.override.md").write_text("")
    (project / "AGENTS.md").write_text("agents")
    assert _texts(load_chain(project)) == [], "as in Codex: the folder's file is the override, and it is empty"


def test_without_git_only_the_working_directory_is_read(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("parent")
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "AGENTS.md").write_text("here")
    assert _texts(load_chain(tmp_path / "w")) == ["here"]


def test_the_chain_is_cut_at_its_budget_with_a_mark_and_one_warning(project: Path) -> None:
    (project / "AGENTS.md").write_text("r" * 30_000)
    (project / "a" / "AGENTS.md").write_text("a" * 5_000)
    (project / "a" / "b" / "AGENTS.md").write_text("b" * 100)
    chain = load_chain(project / "a" / "b")
    assert len(chain.files) == 2 and chain.files[1].cut and not chain.files[0].cut
    assert "[... the AGENTS.md chain cut at" in chain.files[1].text
    assert sum(len(f.text.split("\n[...")[0].encode()) for f in chain.files) <= 32 * 1024
    assert len(chain.warnings) == 1 and "32,768 bytes" in chain.warnings[0]


def test_imports_are_expanded_outside_code_only(project: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "style.md").write_text("STYLE RULES")
    (project / "AGENTS.md").write_text("See @docs/style.md.\n`@docs/style.md` in a span\n```\n@docs/style.md\n```\n"
                                       "Thanks @alice and @dataclass\n")
    [loaded] = load_chain(project).files
    text = loaded.text
    assert text.count("STYLE RULES") == 1 and "<!-- Imported from: docs/style.md -->" in text
    assert "`@docs/style.md` in a span" in text and "```\n@docs/style.md\n```" in text
    assert "Thanks @alice and @dataclass" in text, "a word that names no file is left alone"


def test_a_cycle_is_refused_with_a_note(project: Path) -> None:
    (project / "one.md").write_text("one @two.md")
    (project / "two.md").write_text("two @one.md")
    (project / "AGENTS.md").write_text("@one.md")
    chain = load_chain(project)
    assert "one" in chain.files[0].text and "two" in chain.files[0].text
    assert "refused: it imports itself" in chain.files[0].text and any("cycle" in w for w in chain.warnings)


def test_an_import_outside_the_workspace_is_refused(project: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("OUTSIDE")
    (project / "link.md").symlink_to(tmp_path / "secret.md")
    (project / "AGENTS.md").write_text("@../secret.md and @link.md")
    text = load_chain(project).files[0].text
    assert "OUTSIDE" not in text and text.count("outside the workspace") == 2


def test_imports_go_five_levels_deep(tmp_path: Path) -> None:
    for i in range(MAX_DEPTH + 2):
        (tmp_path / f"f{i}.md").write_text(f"level{i} @f{i + 1}.md")
    text, notes = expand_imports("@f0.md", tmp_path / "AGENTS.md", tmp_path)
    assert f"level{MAX_DEPTH - 1}" in text and f"level{MAX_DEPTH}" not in text
    assert len(notes) == 1 and "at most 5 levels" in notes[0]


def test_a_nested_file_joins_when_its_subtree_is_first_read(project: Path) -> None:
    (project / "AGENTS.md").write_text("root")
    (project / "a" / "b" / "AGENTS.md").write_text("deep rule")
    (project / "a" / "b" / "x.py").write_text("x = 1\n")
    (project / "other.py").write_text("")
    chain = load_chain(project)
    rules = NestedRules(project, chain, fallbacks=["CLAUDE.md"])
    assert rules.see(["other.py", "missing/y.py", "/etc/passwd"]) == []
    [new] = rules.see(["a/b/x.py"])
    assert new.text == "deep rule" and new.kind == "nested" and _texts(chain) == ["root", "deep rule"]
    assert rules.see([os.path.join(project, "a", "b")]) == [], "added once"
