"""Agent Skills: real SKILL.md files from anthropics/skills (tests/fixtures/skills), the
standard's rules (one warning naming the file and the rule), the catalog's budget, and
activation (body, folder, files; a file read confined to the skill folder)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctxagent.harness.activate import activation_text, read_skill_file
from ctxagent.harness.catalog import render_catalog
from ctxagent.harness.skills import discover_skills
from ctxagent.tools.skill import SkillTool
from ctxagent.tools.terminal import TerminalTool

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "skills"


def _skill(root: Path, folder: str, front: str, body: str = "Do the thing.\n") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n{body}", encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "internal-comms", root / ".claude" / "skills" / "internal-comms")
    shutil.copytree(FIXTURES / "brand-guidelines", root / ".agents" / "skills" / "brand-guidelines")
    return root


def test_real_skills_are_found_with_their_front_matter(repo: Path, tmp_path: Path) -> None:
    skills, warnings = discover_skills(repo, tmp_path / "home")
    assert warnings == []
    assert [s.name for s in skills] == ["brand-guidelines", "internal-comms"], ".agents/skills is searched first"
    comms = skills[1]
    assert comms.description.startswith("A set of resources to help me write all kinds of internal communications")
    assert comms.license == "Complete terms in LICENSE.txt" and comms.scope == "repo"
    assert comms.body.startswith("## When to use this skill")


@pytest.mark.parametrize(("front", "rule"), [
    ("name: Bad-Name\ndescription: d", "may hold only a-z, 0-9 and single hyphens"),
    ("name: bad--name\ndescription: d", "single hyphens"),
    ("name: -bad\ndescription: d", "may not start or end"),
    ("name: other\ndescription: d", "must equal its folder's name"),
    (f"name: {'a' * 65}\ndescription: d", "at most 64"),
    ("name: skill-x", "`description` is required"),
    ("name: skill-x\ndescription: " + "d" * 1025, "at most 1,024"),
    ("name: skill-x\ndescription: d\ncompatibility: " + "c" * 501, "1-500 characters"),
    ("name: skill-x\ndescription: d\nmetadata: [1, 2]", "`metadata` must be a mapping"),
    ("name: [unclosed\ndescription: d", "not valid YAML"),
])
def test_an_invalid_skill_is_skipped_with_one_warning_naming_file_and_rule(tmp_path: Path, front: str, rule: str) -> None:
    folder = "a" * 65 if "a" * 65 in front else "skill-x"
    path = _skill(tmp_path / "repo" / ".ctxagent" / "skills", folder, front)
    skills, warnings = discover_skills(tmp_path / "repo", None)
    assert skills == [] and len(warnings) == 1
    assert warnings[0].path == path and rule in warnings[0].rule and str(path) in str(warnings[0])


def test_no_front_matter_is_a_warning_too(tmp_path: Path) -> None:
    path = tmp_path / "repo" / ".ctxagent" / "skills" / "plain" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text("# Just Markdown\n")
    [warning] = discover_skills(tmp_path / "repo", None)[1]
    assert "YAML front matter" in warning.rule


def test_other_clients_keys_are_tolerated_and_an_unquoted_colon_is_read(tmp_path: Path) -> None:
    _skill(tmp_path / "home" / ".agents" / "skills", "pdf-tools",
           "name: pdf-tools\ndescription: Use this skill when: the user asks about PDFs\n"
           "allowed-tools: Read, Grep\nmodel: sonnet\ndisable-model-invocation: false\nmetadata:\n  version: '1.0'")
    [skill], warnings = discover_skills(None, tmp_path / "home")
    assert warnings == [] and skill.scope == "user"
    assert skill.description == "Use this skill when: the user asks about PDFs"
    assert skill.allowed_tools == "Read, Grep" and skill.extra == {"model": "sonnet", "disable-model-invocation": False}


def test_the_repository_wins_a_name_and_the_shadowed_one_is_warned_about(repo: Path, tmp_path: Path) -> None:
    shadow = _skill(tmp_path / "home" / ".config" / "ctxagent" / "skills", "internal-comms",
                    "name: internal-comms\ndescription: the user's own")
    skills, warnings = discover_skills(repo, tmp_path / "home")
    assert [s.scope for s in skills if s.name == "internal-comms"] == ["repo"]
    assert [w.path for w in warnings] == [shadow] and "taken by" in warnings[0].rule


def test_a_repository_skill_linking_outside_the_repository_is_skipped(tmp_path: Path) -> None:
    outside = _skill(tmp_path / "elsewhere", "evil", "name: evil\ndescription: d").parent
    (tmp_path / "repo" / ".claude" / "skills").mkdir(parents=True)
    (tmp_path / "repo" / ".claude" / "skills" / "evil").symlink_to(outside)
    skills, [warning] = discover_skills(tmp_path / "repo", None)
    assert skills == [] and "outside the repository" in warning.rule


def test_the_catalog_holds_names_and_descriptions_within_its_budget(repo: Path, tmp_path: Path) -> None:
    skills, _ = discover_skills(repo, tmp_path / "home")
    text, shown = render_catalog(skills, 10_000, workspace=repo)
    assert shown == 2 and "- internal-comms: A set of resources" in text
    assert "(.claude/skills/internal-comms/SKILL.md)" in text and "## When to use" not in text, "bodies are not listed"
    small, shown = render_catalog(skills, 120, workspace=repo)
    assert shown == 1 and "1 more skills not listed" in small


def test_activation_gives_body_folder_and_files_and_the_terminal_reads_them(repo: Path, tmp_path: Path) -> None:
    skill = next(s for s in discover_skills(repo, tmp_path / "home")[0] if s.name == "internal-comms")
    text = activation_text(skill, workspace=repo)
    assert text.startswith('<skill_content name="internal-comms">') and "## How to use this skill" in text
    assert "Skill directory: .claude/skills/internal-comms" in text
    assert "<file>examples/3p-updates.md</file>" in text and "<file>LICENSE.txt</file>" in text
    out = TerminalTool(workspace=repo, sandbox=False).execute(
        {"command": "cat .claude/skills/internal-comms/examples/3p-updates.md"})
    assert out.ok and "3P updates stand for" in out.content


def test_a_skill_file_is_read_only_inside_its_folder(repo: Path, tmp_path: Path) -> None:
    skill = next(s for s in discover_skills(repo, tmp_path / "home")[0] if s.name == "internal-comms")
    assert "3P updates stand for" in read_skill_file(skill, "examples/3p-updates.md")
    (tmp_path / "secret.txt").write_text("SECRET")
    (skill.folder / "link.txt").symlink_to(tmp_path / "secret.txt")
    for bad in ("../../../../secret.txt", "link.txt", str(tmp_path / "secret.txt")):
        with pytest.raises(ValueError, match="outside the skill folder"):
            read_skill_file(skill, bad)


def test_the_skill_tool_loads_lists_and_reads(repo: Path, tmp_path: Path) -> None:
    tool = SkillTool(repo, home=tmp_path / "home")
    assert tool.offered
    loaded = tool.execute({"name": "internal-comms"})
    assert loaded.ok and "examples/3p-updates.md" in loaded.content
    assert "3P updates" in tool.execute({"name": "internal-comms", "file": "examples/3p-updates.md"}).content
    listing = tool.execute({"action": "list"})
    assert listing.ok and listing.data == ["brand-guidelines", "internal-comms"]
    unknown = tool.execute({"name": "nope"})
    assert not unknown.ok and "the skills are: brand-guidelines, internal-comms" in unknown.content
    assert not SkillTool(tmp_path / "empty", home=tmp_path / "home").offered
