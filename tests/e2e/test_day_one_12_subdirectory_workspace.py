"""Issue 15, item 12: started in a subdirectory without --repo, the workspace is the
enclosing git root (git works, the whole repository is in reach, one `.ctxagent/`); the
working directory still counts for the AGENTS.md chain, the model's prompt and the
terminal of `ctxagent tool`. Outside git, the working directory with a warning naming
--repo when a parent holds `.ctxagent/`. The real CLI in a subprocess, the fake server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.conftest import ctxagent_exe, model_env
from tests.support.fake_openai import text, tool_calls


def _in(folder: Path, env: dict[str, str], *args: str, extra: dict[str, str] | None = None,
        input: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([*ctxagent_exe(), *args], cwd=folder, env={**env, **(extra or {})}, input=input,
                          capture_output=True, text=True, timeout=120)


def _tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m.get("role") == "tool"]


def test_run_in_a_subdirectory_works_on_the_whole_repository(fake_server, env, repo: Path) -> None:
    (repo / "src" / "AGENTS.md").write_text("Rule of src: keep greet() pure.\n", encoding="utf-8")
    server = fake_server([tool_calls([("terminal", json.dumps({"command": "git status --short"}))]),
                          tool_calls([("terminal", json.dumps({"command": "cat README.md"}))]),
                          text("done")])
    proc = _in(repo / "src", env, "run", "look around", extra=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert (repo / ".ctxagent").is_dir() and not (repo / "src" / ".ctxagent").exists()
    first, _, last = server.requests()
    system = first["messages"][0]["content"]
    assert str(repo.resolve()) in system and "Rule of src: keep greet() pure." in system
    assert "started ctxagent in the folder `src/`" in system
    git_status, readme = _tool_results(last)
    assert "?? src/AGENTS.md" in git_status and "not a git repository" not in git_status
    assert "A tiny greeting program." in readme
    assert "warning" not in proc.stderr


def test_tool_terminal_starts_where_the_user_is(env, repo: Path) -> None:
    proc = _in(repo / "src", env, "tool", "terminal", '{"command": "ls"}')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["app.py"]
    up = _in(repo / "src", env, "tool", "terminal", '{"command": "cat ../README.md"}')
    assert up.returncode == 0 and "A tiny greeting program." in up.stdout  # `..` is inside the workspace


def test_apply_in_a_subdirectory_checkpoints_in_the_root_state(env, repo: Path) -> None:
    (repo / "src" / "fix.patch").write_text("*** Begin Patch\n*** Update File: src/app.py\n@@ def greet(name):\n"
                                           '-    return "hello " + name\n+    return "hi " + name\n*** End Patch\n',
                                           encoding="utf-8")
    proc = _in(repo / "src", env, "apply", "fix.patch", "--yes")  # the file relative to the working directory
    assert proc.returncode == 0, proc.stderr
    assert '"hi " + name' in (repo / "src" / "app.py").read_text(encoding="utf-8")
    assert (repo / ".ctxagent" / "checkpoints").is_dir() and not (repo / "src" / ".ctxagent").exists()
    listed = _in(repo / "src", env, "checkpoints", "--json")
    assert [c["tool"] for c in json.loads(listed.stdout)] == ["apply"]


def test_an_old_subdirectory_state_folder_is_named_with_the_way_to_use_it(env, repo: Path) -> None:
    (repo / "src" / ".ctxagent").mkdir()
    proc = _in(repo / "src", env, "sessions")
    assert proc.returncode == 0
    assert "the workspace is the git repository" in proc.stderr and "pass --repo ." in proc.stderr
    here = _in(repo / "src", env, "sessions", "--repo", ".")
    assert here.returncode == 0 and "warning" not in here.stderr and str((repo / "src").resolve()) in here.stdout


def test_outside_git_a_parent_state_folder_is_warned_about(env, tmp_path: Path) -> None:
    parent = tmp_path / "plain"
    (parent / ".ctxagent").mkdir(parents=True)
    (parent / "sub").mkdir()
    proc = _in(parent / "sub", env, "notes", "list")
    assert proc.returncode == 0, proc.stderr
    assert f"pass --repo {parent.resolve()}" in proc.stderr and "not in a git repository" in proc.stderr
    quiet = _in(parent / "sub", env, "notes", "list", "--repo", str(parent))
    assert quiet.returncode == 0 and "warning" not in quiet.stderr


def test_outside_git_without_a_parent_state_nothing_is_said(env, tmp_path: Path) -> None:
    (tmp_path / "lone").mkdir()
    proc = _in(tmp_path / "lone", env, "todo", "list")
    assert proc.returncode == 0 and proc.stderr == ""


def test_doctor_shows_the_workspace_and_where_the_user_is(env, repo: Path) -> None:
    proc = _in(repo / "src", env, "doctor", "--offline", extra={"COLUMNS": "300"})
    assert f"workspace: {repo.resolve()} (the enclosing git repository; started in src/)" in proc.stdout
