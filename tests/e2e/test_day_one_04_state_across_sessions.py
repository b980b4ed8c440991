"""Issue 15 item 4, through the real CLI and the fake server: state carried from one session to
the next is said at the start (which session, how old, how to drop it) and can be dropped
(`--fresh`, `ctxagent todo clear --all`, `[state] carry_over_max_age_days`); a trivial turn
writes no episodic memory, and one whose change the user reverted is stale, not evidence."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

from tests.e2e.conftest import flat, model_env
from tests.support.fake_openai import text, tool_calls

ITEM = "Port the parser to the new API"
PATCH = ('*** Begin Patch\n*** Update File: src/app.py\n@@ def greet(name):\n-    return "hello " + name\n'
         '+    return "bonjour " + name\n*** End Patch\n')


def _add_item() -> dict:
    return tool_calls([("todo", json.dumps({"action": "add", "content": ITEM}))])


def _last_request_text(server) -> str:
    return json.dumps(server.requests()[-1]["messages"], ensure_ascii=False)


def _session_id(stdout: str) -> str:
    return re.search(r"session (\d{8}-\d{6}-[0-9a-f]+)", stdout).group(1)


def test_a_carried_over_board_is_announced_and_dropped_with_fresh_or_todo_clear(ctxagent, fake_server, repo: Path) -> None:
    first = fake_server([_add_item(), text("Planned.")])
    proc = ctxagent("run", "plan the port", "--repo", str(repo), extra_env=model_env(first))
    assert proc.returncode == 0, proc.stderr
    origin = _session_id(proc.stdout)

    second = fake_server([text("Working on it.")])
    proc = ctxagent("run", "go on with the port", "--repo", str(repo), extra_env=model_env(second))
    assert proc.returncode == 0, proc.stderr
    said = flat(proc.stderr)
    assert f"carried over into this session: 1 open todo item(s) from session {origin}, last changed" in said
    assert "/todo clear" in said and "--fresh" in said and "carry_over_max_age_days" in said
    assert ITEM in _last_request_text(second), "carried over on purpose: the board is in the request"

    third = fake_server([text("Fresh start.")])
    proc = ctxagent("run", "something else", "--repo", str(repo), "--fresh", extra_env=model_env(third))
    assert proc.returncode == 0, proc.stderr
    assert "1 older item(s)/note(s) left out (--fresh)" in flat(proc.stderr)
    assert ITEM not in _last_request_text(third)

    cleared = ctxagent("todo", "clear", "--all", "--repo", str(repo))
    assert cleared.returncode == 0 and "removed 1 todo item(s)" in cleared.stdout
    fourth = fake_server([text("Nothing pending.")])
    proc = ctxagent("run", "anything left?", "--repo", str(repo), extra_env=model_env(fourth))
    assert "carried over" not in proc.stderr and ITEM not in _last_request_text(fourth)


def test_items_older_than_the_setting_are_said_and_not_injected(ctxagent, fake_server, repo: Path, env) -> None:
    assert ctxagent("todo", "add", "Old idea from last month", "--repo", str(repo)).returncode == 0
    assert ctxagent("todo", "add", ITEM, "--repo", str(repo)).returncode == 0
    board_file = repo / ".ctxagent" / "todos.json"
    board = json.loads(board_file.read_text(encoding="utf-8"))
    month_ago = (datetime.now().astimezone() - timedelta(days=30)).isoformat(timespec="seconds")
    board["items"][0]["created_at"] = board["items"][0]["updated_at"] = month_ago
    board_file.write_text(json.dumps(board), encoding="utf-8")
    config = Path(env["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[state]\ncarry_over_max_age_days = 14\n", encoding="utf-8")

    server = fake_server([text("On it.")])
    proc = ctxagent("run", "what is on the board?", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    said = flat(proc.stderr)
    assert "1 open todo item(s), last changed" in said
    assert "1 older item(s)/note(s) left out (older than [state] carry_over_max_age_days = 14)" in said
    sent = _last_request_text(server)
    assert ITEM in sent and "Old idea from last month" not in sent
    assert "Old idea from last month" in ctxagent("todo", "list", "--repo", str(repo)).stdout, "left out, not deleted"


def test_a_trivial_turn_leaves_no_memory_and_a_reverted_change_is_stale(ctxagent, fake_server, repo: Path) -> None:
    chat = fake_server([text("What would you like me to clear?")])
    proc = ctxagent("chat", "--repo", str(repo), input="clear\n/exit\n", extra_env=model_env(chat))
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(ctxagent("memory", "list", "--repo", str(repo), "--json").stdout)
    assert listed == [], "a mistyped command answered by a question is no episode"

    work = fake_server([tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]), text("greet says bonjour now.")])
    proc = ctxagent("run", "make greet French", "--repo", str(repo), "--yes", extra_env=model_env(work))
    assert proc.returncode == 0, proc.stderr
    [episode] = json.loads(ctxagent("memory", "list", "--repo", str(repo), "--json").stdout)
    assert "greet says bonjour now." in episode["content"] and "stale" not in episode
    before = fake_server([text("It does.")])
    assert ctxagent("run", "does greet say bonjour?", "--repo", str(repo), extra_env=model_env(before)).returncode == 0
    assert "greet says bonjour now" in _last_request_text(before), "while it holds, the episode is evidence"

    subprocess.run(["git", "checkout", "--", "src/app.py"], cwd=repo, check=True, capture_output=True)  # the user reverts
    [episode] = json.loads(ctxagent("memory", "list", "--repo", str(repo), "--json").stdout)
    assert episode["stale"] == "reverted: src/app.py" and episode["content"].startswith("[stale: reverted: src/app.py]")
    later = fake_server([text("hello it is.")])
    proc = ctxagent("run", "does greet say bonjour?", "--repo", str(repo), extra_env=model_env(later))
    assert proc.returncode == 0, proc.stderr
    assert "greet says bonjour now" not in _last_request_text(later), "a reverted change is not served as fact"


def test_a_change_undone_with_ctxagent_undo_is_stale_too(ctxagent, fake_server, repo: Path) -> None:
    work = fake_server([tool_calls([("apply_patch", json.dumps({"patch": PATCH}))]), text("greet says bonjour now.")])
    assert ctxagent("run", "make greet French", "--repo", str(repo), "--yes", extra_env=model_env(work)).returncode == 0
    undone = ctxagent("undo", "--repo", str(repo))
    assert undone.returncode == 0, undone.stderr
    assert "bonjour" not in (repo / "src" / "app.py").read_text(encoding="utf-8")
    [episode] = json.loads(ctxagent("memory", "list", "--repo", str(repo), "--json").stdout)
    assert episode["stale"] == "reverted: src/app.py"
