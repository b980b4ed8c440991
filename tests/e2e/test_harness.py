"""The harness end to end (real CLI, fake model): a skill activated and its reference read;
memory files loaded and written through `memory_file`; a rule in a nested AGENTS.md and
one in Spec.md reaching the model in every call of a long task, after two compactions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.e2e.conftest import model_env, write_modules
from tests.support.fake_openai import error, text, tool_calls

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "skills"
PROMPT = "You are compacting"  # the first words of the compaction prompt
SUMMARY = ("## Goal\n- Read the modules\n## Progress and decisions\n- some read\n## Constraints and preferences\n"
           "- (none)\n## Key facts\n- (none)\n## Current state\n- reading\n## Next steps\n- read the rest\n")
TOO_LONG = error(400, {"error": {"message": "This model's maximum context length is 8000 tokens. However, your "
                                            "messages resulted in 9000 tokens.", "type": "invalid_request_error",
                                 "code": "context_length_exceeded"}})


def _call(tool: str, **args) -> dict:
    return tool_calls([(tool, json.dumps(args))])


def _config(env: dict[str, str], body: str) -> Path:
    config = Path(env["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(body, encoding="utf-8")
    return config.parent


def _system(body: dict) -> str:
    return body["messages"][0]["content"]


def _tool_results(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_a_skill_is_activated_and_its_reference_read(ctxagent, fake_server, repo: Path, env) -> None:
    shutil.copytree(FIXTURES / "internal-comms", repo / ".claude" / "skills" / "internal-comms")
    _config(env, "[agent]\nepisodic_memory = false\n")
    server = fake_server([_call("skill", name="internal-comms"),
                          _call("terminal", command="cat .claude/skills/internal-comms/examples/3p-updates.md"),
                          text("Here is the 3P update.")])
    proc = ctxagent("run", "write a 3P update for my team", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    first, _, last = server.requests()
    assert "- internal-comms: A set of resources to help me write" in _system(first)
    assert "## How to use this skill" not in _system(first), "only names and descriptions before activation"
    assert "skill" in [t["function"]["name"] for t in first["tools"]]
    activated, reference = _tool_results(last)
    assert activated.startswith('<skill_content name="internal-comms">') and "## How to use this skill" in activated
    assert "<file>examples/3p-updates.md</file>" in activated
    assert "3P updates stand for" in reference


def test_memory_files_are_loaded_and_written_through_memory_file(ctxagent, fake_server, repo: Path, env) -> None:
    user = _config(env, "[agent]\nepisodic_memory = false\n")
    (user / "Agent.md").write_text("You are terse. Notes go to {memory_path}.", encoding="utf-8")
    (repo / ".ctxagent").mkdir(exist_ok=True)
    memory = repo / ".ctxagent" / "Memory.md"
    memory.write_text("# Long-term memory\n- 2026-01-05: releases are tagged vX.Y\n", encoding="utf-8")
    server = fake_server([_call("memory_file", action="remember", content="CI runs on Python 3.10 and 3.13"),
                          _call("memory_file", action="learn", title="Cut a release", when="the user asks for a release",
                                how="1. bump the version\n2. tag vX.Y"),
                          _call("memory_file", action="remember", content="ci runs on python 3.10 and 3.13"),
                          text("Remembered."), text("I know.")])
    proc = ctxagent("run", "remember how CI runs and how to release", "--repo", str(repo), "--yes",
                    extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    first = server.requests()[0]
    assert f"<Agent_Profile>\n(from {user / 'Agent.md'})\nYou are terse. Notes go to {memory}." in _system(first)
    assert "<Long_Term_Memory>" in _system(first) and "releases are tagged vX.Y" in _system(first)
    assert _tool_results(server.requests()[3])[-1].startswith("that memory is already in")
    text_now = memory.read_text(encoding="utf-8")
    assert text_now.startswith("# Long-term memory\n- 2026-01-05: releases are tagged vX.Y\n")
    assert text_now.count("CI runs on Python 3.10 and 3.13") == 1
    assert "## Cut a release" in (repo / ".ctxagent" / "CustomSkill.md").read_text(encoding="utf-8")

    proc = ctxagent("run", "what do you know?", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    system = _system(server.requests()[-1])
    assert "CI runs on Python 3.10 and 3.13" in system and "<Custom_Skills>" in system and "## Cut a release" in system


def test_memory_file_writes_need_approval(ctxagent, fake_server, repo: Path, env) -> None:
    _config(env, "[agent]\nepisodic_memory = false\n")
    server = fake_server([_call("memory_file", action="remember", content="a fact"), text("ok")])
    proc = ctxagent("run", "remember a fact", "--repo", str(repo), input="n not now\n", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert not (repo / ".ctxagent" / "Memory.md").exists()
    assert "not now" in _tool_results(server.requests()[-1])[-1]


def test_nested_and_spec_rules_reach_every_call_after_two_compactions(ctxagent, fake_server, repo: Path, env) -> None:
    write_modules(repo, 5)
    (repo / "pkg" / "inner").mkdir(parents=True)
    (repo / "pkg" / "inner" / "mod.py").write_text("VALUE = 1\n", encoding="utf-8")
    (repo / "pkg" / "AGENTS.md").write_text("NESTED-RULE-42: name every constant in CAPS.\n", encoding="utf-8")
    (repo / ".ctxagent").mkdir(exist_ok=True)
    (repo / ".ctxagent" / "Spec.md").write_text("SPEC-RULE-7: verify before you finish.\n", encoding="utf-8")
    _config(env, "[model]\ncontext_window = 8000\nmax_output_tokens = 500\n"
                 '[agent]\ntools = ["terminal"]\nepisodic_memory = false\n')
    reads = [_call("terminal", command=f"cat m{i}.py") for i in range(5)]
    server = fake_server([_call("terminal", command="cat pkg/inner/mod.py"), *reads[:2], TOO_LONG,
                          *reads[2:], TOO_LONG, text("All read.")],
                         rules=[{"contains": PROMPT, "step": text(SUMMARY)}])
    proc = ctxagent("run", "read every module", "--repo", str(repo), "--yes", extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    main = [b for b in server.requests() if not any(PROMPT in str(m.get("content")) for m in b["messages"])]
    assert len(main) == 9 and len(server.requests()) == 11, "7 steps, 2 refused as too long, 2 summary calls"
    assert all("SPEC-RULE-7" in _system(b) for b in main)
    assert "NESTED-RULE-42" not in _system(main[0]), "added when the subtree is first read"
    assert all("NESTED-RULE-42" in _system(b) for b in main[1:])
    [session] = (repo / ".ctxagent" / "sessions").glob("*.jsonl")
    events = [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines()]
    assert sum(1 for e in events if e.get("event", {}).get("type") == "compaction") == 2
