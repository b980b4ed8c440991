"""Hooks end to end (real CLI, fake model): a PreToolUse hook blocks apply_patch on a path and
the model reads why; a PostToolUse hook's context reaches the next request; UserPromptSubmit
blocks a prompt; a Stop hook sends the model back once; SessionStart / SessionEnd run; a
repository's own hooks run only once it is trusted; a hook that hangs does not hang the session."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import APP_PY, model_env
from tests.support.fake_openai import text, tool_calls

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hooks"
PATCH = ("*** Begin Patch\n*** Update File: src/app.py\n@@ def greet(name):\n"
         '-    return "hello " + name\n+    return "Hello, " + name + "!"\n*** End Patch\n')


def _user_hooks(env: dict[str, str], table: dict) -> None:
    folder = Path(env["XDG_CONFIG_HOME"]) / "ctxagent"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text("[agent]\nepisodic_memory = false\n", encoding="utf-8")
    (folder / "hooks.json").write_text(json.dumps({"hooks": table}), encoding="utf-8")


def _command(command: str, matcher: str | None = None, timeout: float | None = None) -> list[dict]:
    hook: dict = {"type": "command", "command": command}
    if timeout is not None:
        hook["timeout"] = timeout
    group: dict = {"hooks": [hook]}
    if matcher is not None:
        group["matcher"] = matcher
    return [group]


def _tool_results(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_a_pre_tool_use_hook_blocks_a_patch_and_the_model_sees_why(ctxagent, fake_server, repo: Path, env) -> None:
    _user_hooks(env, {"PreToolUse": _command(f"python3 {FIXTURES / 'protect_paths.py'}", matcher="apply_patch")})
    server = fake_server([tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]), text("I will not touch it.")])
    proc = ctxagent("run", "Make the greeting friendlier.", "--repo", str(repo), "--yes", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert (repo / "src" / "app.py").read_text(encoding="utf-8") == APP_PY  # --yes, yet nothing written
    [result] = _tool_results(server.requests()[-1])
    assert "blocked this apply_patch call; it was NOT executed" in result
    assert "src/app.py is frozen by the release process: put the change in src/app_next.py instead" in result


def test_a_post_tool_use_hooks_context_reaches_the_next_request(ctxagent, fake_server, repo: Path, env) -> None:
    _user_hooks(env, {"PostToolUse": _command(f"bash {FIXTURES / 'remind_tests.sh'}", matcher="terminal")})
    server = fake_server([tool_calls([("terminal", json.dumps({"command": "ls"}))]), text("Listed.")])
    proc = ctxagent("run", "List the files.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    [result] = _tool_results(server.requests()[-1])
    assert "README.md" in result
    assert result.endswith("[PostToolUse hook context] Reminder from the team: run `python -m pytest "
                           "tests/test_app.py` after every change.")


def test_a_user_prompt_submit_hook_blocks_the_prompt(ctxagent, fake_server, repo: Path, env) -> None:
    _user_hooks(env, {"UserPromptSubmit": _command(
        "grep -q 'deploy' && { echo 'deploys go through the release checklist, not the agent' >&2; exit 2; }; exit 0")})
    server = fake_server([text("never sent")])
    proc = ctxagent("run", "deploy to production", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "deploys go through the release checklist, not the agent" in " ".join((proc.stdout + proc.stderr).split())
    assert server.requests() == []  # the model never saw the prompt


def test_session_start_context_and_a_stop_hook_that_sends_the_model_back(ctxagent, fake_server, repo: Path, env) -> None:
    marker = repo.parent / "stopped-once"
    ended = repo.parent / "session-ended"
    _user_hooks(env, {
        "SessionStart": _command("echo 'Current sprint: the greeting must stay lower-case.'", matcher="startup"),
        "Stop": _command(f"test -e {marker} && exit 0; touch {marker}; echo 'the tests were not run: run them' >&2; exit 2"),
        "SessionEnd": _command(f"cat > {ended}"),
    })
    server = fake_server([text("Done."), text("Ran them: all green.")])
    proc = ctxagent("run", "Check the greeting.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    first, second = server.requests()
    user = [m["content"] for m in first["messages"] if m["role"] == "user"]
    assert user[0].startswith("Check the greeting.")
    assert "Current sprint: the greeting must stay lower-case." in "\n".join(user)
    assert second["messages"][-1] == {"role": "user", "content": "[Stop hook] the tests were not run: run them"}
    assert "Ran them: all green." in proc.stdout
    assert json.loads(ended.read_text())["hook_event_name"] == "SessionEnd"


def test_a_repositorys_hooks_run_only_once_trusted(ctxagent, fake_server, repo: Path, env) -> None:
    ran = repo.parent / "repo-hook-ran"
    (repo / ".ctxagent").mkdir()
    (repo / ".ctxagent" / "hooks.json").write_text(json.dumps({"SessionStart": _command(f"touch {ran}")}))
    server = fake_server([text("ok"), text("ok")])
    proc = ctxagent("run", "hi", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert not ran.exists()
    assert "were not run: this repository is not trusted" in " ".join((proc.stdout + proc.stderr).split())
    proc = ctxagent("run", "hi", "--repo", str(repo), "--trust-repo-config", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert ran.exists()


def test_a_hook_that_hangs_is_killed_and_the_session_goes_on(ctxagent, fake_server, repo: Path, env) -> None:
    _user_hooks(env, {"PreToolUse": _command("sleep 600", timeout=1)})
    server = fake_server([tool_calls([("terminal", json.dumps({"command": "ls"}))]), text("Listed.")])
    proc = ctxagent("run", "List the files.", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "was killed after its 1 s timeout" in " ".join((proc.stdout + proc.stderr).split())
    assert "README.md" in _tool_results(server.requests()[-1])[0]


def test_a_pre_compact_hook_runs_before_an_automatic_compaction(ctxagent, fake_server, repo: Path, env) -> None:
    """Compactions the context engine starts on its own (the window filled up in a long turn)
    run the PreCompact hooks matched by "auto", with the event on stdin, as `/compact` does."""
    _user_hooks(env, {"PreCompact": _command("cat > ../precompact.json", matcher="auto")})
    config = Path(env["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    config.write_text('[agent]\nepisodic_memory = false\ntools = ["terminal"]\n'
                      "[model]\ncontext_window = 6000\nmax_output_tokens = 500\n",
                      encoding="utf-8")
    (repo / "big.txt").write_text("".join(f"line {i}: the configuration value is {i * 7}\n" for i in range(400)),
                                  encoding="utf-8")
    reads = [tool_calls([("terminal", json.dumps({"command": f"sed -n '{a},{a + 99}p' big.txt"}))])
             for a in range(1, 400, 100)]
    server = fake_server([*reads, *reads, text("Read it all.")])
    proc = ctxagent("run", "Read big.txt in parts.", "--repo", str(repo), "--json", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert any(e["type"] == "compaction" for e in events), "the window filled up: a compaction"
    payload = json.loads((repo.parent / "precompact.json").read_text(encoding="utf-8"))
    assert payload["hook_event_name"] == "PreCompact" and payload["trigger"] == "auto"
