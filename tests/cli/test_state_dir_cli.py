"""Every command that creates `.ctxagent/` goes through `ensure_state_dir` (breaker F5, F16).

F5: after `ctxagent apply`, `tool`, `memory`, `notes`, `todo` and `run`, the state folder
holds a `.gitignore` of `*` and `git status` does not offer `.ctxagent/` for committing;
a command that only looks (`tool terminal`, `tool context_fetch`) creates no state folder
(issue 16).
F16: when a cloned repository ships `.ctxagent` (or `.ctxagent/sessions`, `memory.db`...)
as a symbolic link, every command refuses with a message naming the link, and nothing
is written to the place it points at. Real entry point, fake model only.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import Out, invoke
from tests.support.fake_openai import text, tool_calls

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n"

#: One command per way of creating state; `{repo}` and `{patch}` are filled in.
CREATORS = {
    "apply": ["apply", "{patch}", "--repo", "{repo}", "--yes"],
    "tool_note": ["tool", "note", '{"action": "create", "title": "t", "content": "c"}', "--repo", "{repo}"],
    "tool_todo": ["tool", "todo", '{"action": "add", "content": "x"}', "--repo", "{repo}"],
    "tool_memory": ["tool", "memory", '{"action": "add", "content": "x"}', "--repo", "{repo}"],
    "tool_rag": ["tool", "rag", '{"action": "add_text", "text": "x"}', "--repo", "{repo}"],
    "memory_add": ["memory", "add", "remember this", "--repo", "{repo}"],
    "memory_list": ["memory", "list", "--repo", "{repo}"],
    "notes_add": ["notes", "add", "--title", "a title", "--content", "body", "--repo", "{repo}"],
    "todo_add": ["todo", "add", "an item", "--repo", "{repo}"],
}
#: Commands that only look: they refuse a linked state folder but never create one.
LOOKERS = {
    "tool_terminal": ["tool", "terminal", '{"command": "ls"}', "--repo", "{repo}"],
    "tool_context_fetch": ["tool", "context_fetch", '{"query": "a"}', "--repo", "{repo}"],
}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    for name in ("CTXAGENT_PROVIDER", "CTXAGENT_MODEL", "CTXAGENT_BASE_URL", "CTXAGENT_API_KEY", "OPENAI_API_KEY",
                 "DEEPSEEK_API_KEY", "DASHSCOPE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (tmp_path / "fix.patch").write_text(PATCH)
    return root


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    folder = tmp_path / "victim"
    folder.mkdir()
    return folder


def run_creator(name: str, repo: Path) -> Out:
    fill = {"{repo}": str(repo), "{patch}": str(repo.parent / "fix.patch")}
    args = [fill.get(a, a) for a in {**CREATORS, **LOOKERS}[name]]
    return invoke(args)


def run_task(repo: Path, server, *extra: str) -> Out:
    return invoke(["run", "say hi", "--repo", str(repo), "--yes", "--provider", "custom", "--base-url",
                   server.base_url, "--model", "fake", *extra])


@pytest.mark.parametrize("name", sorted(CREATORS))
def test_F5_every_command_that_creates_state_writes_the_gitignore(repo: Path, name: str) -> None:
    out = run_creator(name, repo)
    assert out.exit_code == 0, out.output
    assert (repo / ".ctxagent" / ".gitignore").read_text() == "*\n"


def test_F5_run_creates_sessions_and_snapshots_under_a_gitignore(repo: Path, fake_openai) -> None:
    server = fake_openai([tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]), text("done")])
    out = run_task(repo, server)
    assert out.exit_code == 0, out.output
    state = repo / ".ctxagent"
    assert (state / ".gitignore").read_text() == "*\n"
    assert any((state / "sessions").glob("*.jsonl")) and any((state / "snapshots").iterdir())
    assert (state / "checkpoints" / "log.jsonl").is_file()  # the patch was checkpointed


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_F5_git_does_not_offer_the_state_folder_after_apply(repo: Path) -> None:
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert run_creator("apply", repo).exit_code == 0
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True, check=True).stdout
    assert ".ctxagent" not in status and "a.txt" in status


@pytest.mark.parametrize("name", sorted(LOOKERS))
def test_looking_creates_no_state_folder(repo: Path, name: str) -> None:
    out = run_creator(name, repo)
    assert out.exit_code == 0, out.output
    assert not (repo / ".ctxagent").exists()


@pytest.mark.parametrize("name", sorted({**CREATORS, **LOOKERS}))
def test_F16_every_command_refuses_a_symlinked_state_dir(repo: Path, victim: Path, name: str) -> None:
    (repo / ".ctxagent").symlink_to(victim, target_is_directory=True)
    out = run_creator(name, repo)
    assert out.exit_code != 0
    assert "symbolic link" in out.output and "Traceback" not in out.output
    assert list(victim.iterdir()) == []
    assert (repo / "a.txt").read_text() == "a\n"  # apply refused before writing anything


def test_F16_run_refuses_a_symlinked_state_dir_before_calling_the_model(repo: Path, victim: Path,
                                                                         fake_openai) -> None:
    server = fake_openai([text("hi")])
    (repo / ".ctxagent").symlink_to(victim, target_is_directory=True)
    out = run_task(repo, server)
    assert out.exit_code != 0 and "symbolic link" in out.output
    assert server.requests == [] and list(victim.iterdir()) == []


@pytest.mark.parametrize("entry", ["sessions", "snapshots", "memory.db", "notes", "knowledge", "todos.json"])
def test_F16_run_refuses_a_symlinked_entry_of_the_state_dir(repo: Path, victim: Path, fake_openai,
                                                            entry: str) -> None:
    server = fake_openai([text("hi")])
    (repo / ".ctxagent").mkdir()
    (repo / ".ctxagent" / entry).symlink_to(victim / entry)
    out = run_task(repo, server)
    assert out.exit_code != 0 and f"{entry} inside it is a symbolic link" in out.output
    assert server.requests == [] and list(victim.iterdir()) == []


def test_F16_resuming_a_transcript_that_is_a_symlink_is_refused(repo: Path, victim: Path, fake_openai) -> None:
    server = fake_openai([text("hi")])
    target = victim / "profile.txt"
    target.write_text("export PATH=/usr/bin\n")
    (repo / ".ctxagent" / "sessions").mkdir(parents=True)
    (repo / ".ctxagent" / "sessions" / "20991231-000000-abcd.jsonl").symlink_to(target)
    out = run_task(repo, server, "--resume", "last")
    assert out.exit_code != 0 and "symbolic link" in out.output
    assert target.read_text() == "export PATH=/usr/bin\n" and server.requests == []
