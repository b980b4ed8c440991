"""Profile files: the seed agent's six tagged sections in order, placeholders, the cut,
comments not sent, `ctxagent init` never overwriting; the layer and `loaded_memory_files`."""

from __future__ import annotations

from pathlib import Path

from ctxagent.harness.init import init_profile
from ctxagent.harness.layer import HarnessOptions, build_system_layer, loaded_memory_files
from ctxagent.harness.profile import PROFILE_FILES, load_profile, render_profile
from tests.support.cli import invoke


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


def test_each_file_is_its_own_section_in_the_seed_order(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    for name, _ in reversed(PROFILE_FILES):
        _write(repo / ".ctxagent", name, f"text of {name}")
    text = render_profile(load_profile(repo, None)[0])
    tags = ["Agent_Profile", "Standard_Skills", "Python_Coding_Standard", "Long_Term_Memory", "Custom_Skills",
            "Workflow_Constraints"]
    assert [t for _, t in PROFILE_FILES] == tags
    positions = [text.index(f"<{tag}>") for tag in tags]
    assert positions == sorted(positions)
    assert "<Long_Term_Memory>\n(from " in text and "text of Memory.md\n</Long_Term_Memory>" in text


def test_user_file_comes_before_the_repository_s_in_one_section(tmp_path: Path) -> None:
    _write(tmp_path / "user", "Spec.md", "user spec")
    _write(tmp_path / "repo" / ".ctxagent", "Spec.md", "repo spec")
    files, _ = load_profile(tmp_path / "repo", tmp_path / "user")
    assert [(f.scope, f.text) for f in files] == [("user", "user spec"), ("repo", "repo spec")]
    assert render_profile(files).count("<Workflow_Constraints>") == 1


def test_only_the_two_placeholders_are_filled(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _write(repo / ".ctxagent", "Agent.md", "Memory in {memory_path}; skills in {custom_skill_path}; "
                                           "keep {other} and {{jinja}} and a dict {'a': 1}")
    [loaded] = load_profile(repo, None)[0]
    assert f"Memory in {repo / '.ctxagent' / 'Memory.md'};" in loaded.text
    assert f"skills in {repo / '.ctxagent' / 'CustomSkill.md'};" in loaded.text
    assert "keep {other} and {{jinja}} and a dict {'a': 1}" in loaded.text


def test_a_long_file_is_cut_marked_and_warned_about_once(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _write(repo / ".ctxagent", "Memory.md", "- fact\n" * 5000)
    [loaded], warnings = load_profile(repo, None, max_bytes=1000)
    assert loaded.cut and loaded.size == 35_000 and "[... Memory.md cut at 1,000 of" in loaded.text
    assert len(loaded.text.encode()) < 1100 and len(warnings) == 1 and "Memory.md" in warnings[0]


def test_init_writes_commented_files_that_cost_nothing_and_never_overwrites(tmp_path: Path) -> None:
    folder = tmp_path / "repo" / ".ctxagent"
    _write(folder, "Spec.md", "MY OWN SPEC")
    written = dict(init_profile(folder))
    assert written[folder / "Spec.md"] is False and (folder / "Spec.md").read_text() == "MY OWN SPEC"
    assert all(written[folder / name] for name, _ in PROFILE_FILES if name != "Spec.md")
    assert "<!--" in (folder / "Agent.md").read_text()
    files, _ = load_profile(tmp_path / "repo", None)
    assert [f.path.name for f in files] == ["Spec.md"], "comment-only starting files are not sent"
    assert dict(init_profile(folder)) == {folder / n: False for n, _ in PROFILE_FILES}


def test_ctxagent_init_lists_what_it_wrote_and_kept(tmp_path: Path) -> None:
    _write(tmp_path / ".ctxagent", "Agent.md", "mine")
    out = invoke(["init", "--repo", str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert f"kept  {tmp_path / '.ctxagent' / 'Agent.md'}" in out.stdout
    assert f"wrote {tmp_path / '.ctxagent' / 'Spec.md'}" in out.stdout
    assert (tmp_path / ".ctxagent" / "Agent.md").read_text() == "mine"


def test_the_layer_and_loaded_memory_files(tmp_path: Path) -> None:
    repo, user = tmp_path / "repo", tmp_path / "user"
    (repo / ".git").mkdir(parents=True)
    _write(repo, "AGENTS.md", "project rule")
    _write(user, "AGENTS.md", "user rule")
    _write(repo / ".ctxagent", "Spec.md", "verify first")
    layer = build_system_layer(repo, HarnessOptions(user_dir=user, home=tmp_path / "home"))
    text = layer.text()
    assert text.index("<Workflow_Constraints>") < text.index("# Project instructions (AGENTS.md)")
    assert text.index("user rule") < text.index("project rule")
    assert loaded_memory_files(layer) == [
        (repo / ".ctxagent" / "Spec.md", "profile:Workflow_Constraints", 12, False),
        (user / "AGENTS.md", "agents", 9, False),
        (repo / "AGENTS.md", "agents", 12, False)]
