"""Start-up (issue 16): the commands that need no model import neither the openai SDK nor
every command module, and looking creates no `.ctxagent/`.

Each command runs in a fresh interpreter (the real entry point, `run_cli`), which then
writes the names in its `sys.modules` to a file: what a user's process would have loaded.
The timings are in benchmarks/startup.py, not here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from ctxagent.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n"
PROBE = ("import json, sys\nfrom ctxagent.cli.main import run_cli\ncode = run_cli(sys.argv[2:])\n"
         "open(sys.argv[1], 'w').write(json.dumps({'code': code, 'modules': sorted(sys.modules)}))\n")

#: command -> (argv, the command module it may load besides run_cmd's shared options).
NO_MODEL = {
    "help": (["--help"], None),
    "tool": (["tool", "terminal", '{"command": "ls"}'], "tool_cmd"),
    "notes": (["notes", "list"], "notes_cmd"),
    "todo": (["todo", "list"], "todo_cmd"),
    "memory": (["memory", "list"], "memory_cmd"),
    "apply": (["apply", "{patch}", "--yes"], "apply_cmd"),
    "sessions": (["sessions"], "sessions_cmd"),
    "inspect": (["inspect", "last"], "context_cmd"),
}
LOOKING = {
    "tool_terminal": ["tool", "terminal", '{"command": "ls"}'],
    "tool_context_fetch": ["tool", "context_fetch", '{"query": "a"}'],
    "context": ["context", "what is a", "--json"],
    "inspect": ["inspect", "last"],
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (tmp_path / "fix.patch").write_text(PATCH)
    return root


def probe(repo: Path, args: list[str]) -> dict:
    """Run `ctxagent ARGS` in `repo` in a fresh interpreter: its exit code and loaded modules."""
    home = repo.parent / "home"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("CTXAGENT_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), PYTHONPATH=str(ROOT))
    out = repo.parent / "modules.json"
    args = [str(repo.parent / "fix.patch") if a == "{patch}" else a for a in args]
    proc = subprocess.run([sys.executable, "-c", PROBE, str(out), *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=120)
    assert out.is_file(), proc.stderr
    return {**json.loads(out.read_text()), "stderr": proc.stderr}


@pytest.mark.parametrize("name", sorted(NO_MODEL))
def test_a_command_without_a_model_imports_no_sdk_and_only_its_own_module(repo: Path, name: str) -> None:
    args, own = NO_MODEL[name]
    seen = probe(repo, args)
    modules = seen["modules"]
    assert not [m for m in modules if m == "openai" or m.startswith("openai.")], name
    loaded = {m.rsplit(".", 1)[-1] for m in modules if m.startswith("ctxagent.cli.") and m.endswith("_cmd")}
    assert loaded <= {own, "run_cmd"} - {None}, (name, loaded)
    if own is not None:
        assert own in loaded  # the probe did run the command
        assert "ctxagent.agent.loop" not in modules and "ctxagent.llm.client" not in modules


#: What `ctxagent tool terminal` must not load in a repository without config files: the MCP
#: client (asyncio), the checkpoint store of approved commands, the TOML parser, the offline
#: model's package search, git's checkers (no git in `ls`).
NOT_FOR_A_LOOK = ("asyncio", "ctxagent.mcp.manager", "ctxagent.exec.checkpoints", "tomllib", "tomli",
                  "ctxagent.llm.local.bundle", "ctxagent.shell.commands.git", "ctxagent.harness.hooks")


def test_a_look_with_the_terminal_loads_only_what_it_uses(repo: Path) -> None:
    seen = probe(repo, NO_MODEL["tool"][0])
    assert seen["code"] == 0, seen["stderr"]
    assert not [m for m in NOT_FOR_A_LOOK if m in seen["modules"]]
    (repo / ".ctxagent").mkdir()
    (repo / ".ctxagent" / "config.toml").write_text("[tools]\nterminal_timeout_s = 0\n")
    bad = probe(repo, NO_MODEL["tool"][0])  # a config file is still read and checked as strictly
    assert bad["code"] == 2 and "tools.terminal_timeout_s" in bad["stderr"]


def test_help_lists_every_command_without_importing_one(repo: Path) -> None:
    seen = probe(repo, ["--help"])
    assert seen["code"] == 0
    assert not [m for m in seen["modules"] if m.endswith("_cmd")]
    assert "rich" not in seen["modules"] and "pydantic" not in seen["modules"]


@pytest.mark.parametrize("name", sorted(LOOKING))
def test_looking_creates_no_state_folder(repo: Path, name: str) -> None:
    seen = probe(repo, LOOKING[name])
    assert seen["code"] in (0, 1), seen["stderr"]  # inspect: "no snapshots", an answer, not a crash
    assert not (repo / ".ctxagent").exists(), name


def test_the_command_table_matches_the_commands() -> None:
    group = cli_main.register_commands(click.Group())
    assert set(group.commands) == set(cli_main.COMMANDS)
    for name, (module, text) in cli_main.COMMANDS.items():
        command = group.commands[name]
        assert command.get_short_help_str(limit=1000) == text, name
        assert sys.modules[command.callback.__module__].__name__ == module, name


def test_the_lazy_group_runs_a_command_and_reports_a_broken_one(capsys: pytest.CaptureFixture,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(cli_main.COMMANDS, "nothing", ("ctxagent.cli.no_such_cmd", "Nothing."))
    group = cli_main.CtxAgentGroup(commands={})
    assert group.main(["nothing"], standalone_mode=False) == 1
    assert "could not load" in capsys.readouterr().err
    assert group.get_command(click.Context(group), "sessions").name == "sessions"


def test_the_journal_path_is_the_journals() -> None:
    from ctxagent.storage.files import STATE_DIR_NAME
    from ctxagent.storage.journal import JOURNAL_DIR

    assert cli_main.JOURNAL_PATH == Path(STATE_DIR_NAME, JOURNAL_DIR)
