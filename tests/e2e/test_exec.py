"""The real `ctxagent run` in workspace-write mode: approved commands and python_exec
through the scripted model, with and without the bubblewrap sandbox (issue 11)."""

from __future__ import annotations

import json
import re
import stat
import sys
from pathlib import Path

import pytest

from ctxagent.exec.sandbox import bwrap_works
from tests.e2e.conftest import API_KEY, ROOT, model_env
from tests.e2e.test_config_trust import commit_config
from tests.e2e.test_run import PATCH, tool_results
from tests.support.fake_openai import text, tool_calls

FAILING_TEST = ("from src.app import greet\n\n\ndef test_greet():\n"
                "    assert greet('a') == 'Hello, a!'\n")
SANDBOXES = [pytest.param("off", id="no-sandbox"),
             pytest.param("required", id="bwrap", marks=pytest.mark.skipif(not bwrap_works(),
                                                                           reason="bubblewrap does not work here"))]


def run_call(command: str) -> dict:
    return tool_calls([("terminal", json.dumps({"command": command, "allow_dangerous": True}))])


def code_call(code: str) -> dict:
    return tool_calls([("python_exec", json.dumps({"code": code}))])


def user_config(env: dict[str, str], body: str) -> None:
    path = Path(env["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")


def repo_venv(repo: Path) -> None:
    """`.venv/bin/python` in the repository: this test run's interpreter (which has pytest)."""
    bin_dir = repo / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "python"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (repo / ".gitignore").write_text(".venv/\n.pytest_cache/\n__pycache__/\n", encoding="utf-8")


def cli_env(server, **more: str) -> dict[str, str]:
    """The model's variables, and this checkout first on the import path (the console
    script may be installed from another one)."""
    return {**model_env(server), "PYTHONPATH": str(ROOT), **more}


def run(ctxagent, server, repo: Path, *args: str, input: str = "") -> tuple:
    proc = ctxagent("run", "Make the test pass.", "--repo", str(repo), *args, input=input, extra_env=cli_env(server))
    assert proc.returncode == 0, proc.stderr
    return proc, tool_results(server.requests())


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_failing_pytest_approved_then_patched_then_allowed_by_a_rule(ctxagent, fake_server, repo, env,
                                                                     sandbox) -> None:
    repo_venv(repo)
    (repo / "tests" / "test_app.py").write_text(FAILING_TEST, encoding="utf-8")
    user_config(env, f'[agent]\nmode = "workspace-write"\n[exec]\nsandbox = "{sandbox}"\n'
                     'allow = ["python -m pytest -q"]\ndeny = ["git push *"]\n')
    server = fake_server([run_call("python -m pytest -q tests/test_app.py"),
                          tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]),
                          run_call("python -m pytest -q"), text("The test passes now.")])
    proc, results = run(ctxagent, server, repo, input="y\ny\n")
    first, patched, second = results
    assert "exit code 1" in first and "1 failed" in first, first
    assert ("bubblewrap" if sandbox == "required" else "sandbox: none") in first
    assert "Patch applied" in patched
    assert "exit code 0" in second and "1 passed" in second, second
    assert "run this command?" in proc.stdout and "python -m pytest -q tests/test_app.py" in proc.stdout
    assert "(runs: allowed by the rule `python -m pytest -q`)" in " ".join(proc.stdout.split())
    if sandbox == "off":
        assert "NONE" in proc.stdout  # the prompt says the command runs unsandboxed


def test_a_refusal_with_a_reason_reaches_the_model_and_nothing_runs(ctxagent, fake_server, repo, env) -> None:
    user_config(env, '[agent]\nmode = "workspace-write"\n')
    server = fake_server([run_call("touch made.txt"), text("ok")])
    _, [result] = run(ctxagent, server, repo, input="n use the Makefile instead\n")
    assert "declined" in result and "use the Makefile instead" in result
    assert not (repo / "made.txt").exists()


def test_a_deny_rule_refuses_without_asking(ctxagent, fake_server, repo, env) -> None:
    user_config(env, '[agent]\nmode = "workspace-write"\n[exec]\ndeny = ["git push *", "curl *"]\n')
    server = fake_server([run_call("git push origin main"), run_call("echo hi; curl -s http://x"), text("ok")])
    proc, results = run(ctxagent, server, repo, input="y\ny\n")
    assert "deny rule `git push *`" in results[0] and "deny rule `curl *`" in results[1]
    assert "run this command?" not in proc.stdout


def test_yes_never_approves_a_command_and_allow_exec_does(ctxagent, fake_server, repo, env) -> None:
    user_config(env, '[agent]\nmode = "workspace-write"\n')
    server = fake_server([run_call("touch made.txt"), text("ok")])
    _, [result] = run(ctxagent, server, repo, "--yes")  # stdin is an empty pipe
    assert "declined" in result and "--allow-exec" in result
    assert not (repo / "made.txt").exists()
    server = fake_server([run_call("touch made.txt"), text("ok")])
    proc, [result] = run(ctxagent, server, repo, "--allow-exec")
    assert "exit code 0" in result and "created: made.txt" in result
    assert (repo / "made.txt").exists()


def test_read_only_mode_refuses_naming_the_mode_flag(ctxagent, fake_server, repo) -> None:
    server = fake_server([run_call("touch made.txt"), text("ok")])
    _, [result] = run(ctxagent, server, repo, "--allow-exec")
    assert "--mode workspace-write" in result and not (repo / "made.txt").exists()
    assert "python_exec" not in [t["function"]["name"] for t in server.requests()[0]["tools"]]


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_python_exec_approved_and_refused(ctxagent, fake_server, repo, env, sandbox) -> None:
    user_config(env, f'[exec]\nsandbox = "{sandbox}"\n')
    code = "import os\nopen('out.txt', 'w').write('42')\nprint('wrote', os.path.abspath('out.txt'))\nprint(__file__)\n"
    server = fake_server([code_call(code), code_call("open('no.txt', 'w')\n"), text("ok")])
    proc, (done, refused) = run(ctxagent, server, repo, "--mode", "workspace-write", input="y\nn not now\n")
    assert "exit code 0" in done and f"wrote {repo / 'out.txt'}" in done and "created: out.txt" in done
    script = Path(done.split("[stdout]\n", 1)[1].splitlines()[1])
    assert script.name == "snippet.py" and not script.parent.exists()  # the private directory is gone
    assert "declined" in refused and "not now" in refused and not (repo / "no.txt").exists()
    assert "run this Python code?" in proc.stdout


def test_an_untrusted_repo_config_cannot_allow_or_switch_the_mode_but_can_deny(ctxagent, fake_server, repo,
                                                                              env) -> None:
    commit_config(repo, '[agent]\nmode = "workspace-write"\napproval = "never"\n'
                        '[exec]\nallow = ["touch *"]\ndeny = ["rm *"]\n')
    server = fake_server([run_call("touch made.txt"), text("ok")])
    proc, [result] = run(ctxagent, server, repo)
    assert "--mode workspace-write" in result  # the repository could not switch the mode
    for key in ("agent.mode", "agent.approval", "exec.allow"):
        assert key in proc.stderr
    user_config(env, '[agent]\nmode = "workspace-write"\n[exec]\ndeny = ["git push *"]\n')
    server = fake_server([run_call("touch made.txt"), run_call("rm README.md"), run_call("git push"), text("ok")])
    proc, results = run(ctxagent, server, repo)  # no answers: whatever is asked is refused
    assert "declined" in results[0] and "input closed" in results[0]  # asked: no allow rule from the repo
    assert "deny rule `rm *`" in results[1] and "deny rule `git push *`" in results[2]
    assert not (repo / "made.txt").exists() and (repo / "README.md").exists()


def test_the_environment_is_scrubbed(ctxagent, fake_server, repo, env) -> None:
    user_config(env, '[agent]\nmode = "workspace-write"\n[exec]\nenv_passthrough = ["KEEP_ME"]\n')
    server = fake_server([code_call("import os\nprint(sorted(os.environ.items()))\n"), text("ok")])
    proc = ctxagent("run", "env", "--repo", str(repo), "--allow-exec",
                    extra_env=cli_env(server, KEEP_ME="kept-value", OPENAI_API_KEY="sk-other-0123456789abcdef"))
    assert proc.returncode == 0, proc.stderr
    [result] = tool_results(server.requests())
    assert "kept-value" in result and API_KEY not in result and "sk-other" not in result
    assert "CTXAGENT_API_KEY" not in result and f"('HOME', '{env['HOME']}')" not in result
    assert re.search(r"\('HOME', '[^']*/ctxagent-exec-\w+'\)", result), "HOME is the run's private scratch"


def test_chat_permissions_lists_and_revokes_always_answers(ctxagent, fake_server, repo, env) -> None:
    user_config(env, '[agent]\nmode = "workspace-write"\n[exec]\nallow = ["ruff check *"]\ndeny = ["curl *"]\n')
    server = fake_server([run_call("touch a.txt"), text("made"), run_call("touch b.txt"), text("again")])
    script = "make a\na\n/permissions\nmake b\n/permissions revoke 1\n/permissions\n"
    proc = ctxagent("chat", "--repo", str(repo), input=script, extra_env=cli_env(server))
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "mode: workspace-write" in out and "allow rules: ruff check *" in out and "deny rules: curl *" in out
    assert "'always' this session: 1. touch (terminal)" in out
    assert "(runs: always for `touch` this session (/permissions))" in out  # b.txt ran without asking
    last = out.rsplit(" session ", 1)[0]  # the chat ends with the session id and its resume command
    assert "revoked 'always' for touch" in out and last.rstrip().endswith("'always' this session: none")
    assert (repo / "a.txt").exists() and (repo / "b.txt").exists()
