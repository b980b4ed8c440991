"""Issue 15 item 18 / issue 16 "snapshots cheap to write", through the real CLI and the fake
server: what repeats between calls is stored once, `inspect` still shows every call whole
(the exact request the server received), old version-1 files still show, and `sessions
prune` and the `[state]` retention setting keep `.ctxagent/` from growing without bound."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ctxagent.context.record.snapshot import load_snapshot_file
from ctxagent.storage.files import json_bytes
from tests.e2e.conftest import flat, model_env
from tests.support.fake_openai import text, tool_calls

CALLS = 12


def _reads() -> list[dict]:
    cmds = ["cat src/app.py", "ls", "cat README.md", "cat tests/test_app.py"]
    return [tool_calls([("terminal", json.dumps({"command": cmds[i % len(cmds)]}))]) for i in range(CALLS - 1)]


def _inspect(ctxagent, repo: Path, call: int) -> dict:
    proc = ctxagent("inspect", "last", "--call", str(call), "--repo", str(repo), "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_every_call_is_shown_whole_and_what_repeats_is_stored_once(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server(_reads() + [text("Read them all.")])
    proc = ctxagent("run", "read the project", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    [folder] = (repo / ".ctxagent" / "snapshots").iterdir()
    received = server.requests()
    assert len(received) == CALLS and sorted(int(p.stem) for p in folder.glob("*.json")) == list(range(1, CALLS + 1))
    old_bytes = 0
    for n, body in enumerate(received, 1):
        shown = _inspect(ctxagent, repo, n)
        assert shown["call"] == n and shown["version"] == 2
        assert shown["request"]["messages"] == body["messages"], f"call {n} is shown whole"
        assert shown["request"]["tools"] == body["tools"] and shown["request"]["model"] == body["model"]
        assert [r["id"] for r in shown["report"]["packets"] if r["id"].startswith("msg")], "its packet rows too"
        old_bytes += len(json_bytes({**load_snapshot_file(folder / f"{n}.json"), "version": 1}, indent=1))
    new_bytes = sum(p.stat().st_size for p in folder.iterdir())
    assert new_bytes < old_bytes / 3, (new_bytes, old_bytes)  # the 100-call figure is benchmarks/snapshot_size.py's
    call_file = (folder / f"{CALLS}.json").read_text(encoding="utf-8")
    assert '"messages": "@' in call_file and '"tools": "@' in call_file, "the call's file refers to stored objects"

    table = ctxagent("inspect", "last", "--repo", str(repo))
    assert table.returncode == 0 and f"call {CALLS} of 1..{CALLS}" in table.stdout


def test_an_old_version_1_snapshot_still_shows(ctxagent, repo: Path) -> None:
    folder = repo / ".ctxagent" / "snapshots" / "20250101-120000-0ld1"
    folder.mkdir(parents=True)
    old = {"version": 1, "session": folder.name, "call": 1, "created_at": "2025-01-01T12:00:00+00:00",
           "redacted": False,
           "request": {"model": "m", "messages": [{"role": "system", "content": "sys"},
                                                  {"role": "user", "content": "an old request"}], "tools": []},
           "report": {"budget": {"max_tokens": 1000}, "layers": {},
                      "packets": [{"id": "msg1", "layer": "history", "decision": "selected", "tokens": 4,
                                   "preview": "an old request"}]}}
    (folder / "1.json").write_text(json.dumps(old, indent=1), encoding="utf-8")
    (repo / ".ctxagent" / ".gitignore").write_text("*\n", encoding="utf-8")
    proc = ctxagent("inspect", folder.name, "--repo", str(repo), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["request"]["messages"][1]["content"] == "an old request"
    shown = ctxagent("inspect", folder.name, "--repo", str(repo))
    assert shown.returncode == 0 and "call 1 of 1..1" in shown.stdout


def _age(repo: Path, session: str, days: float) -> None:
    """Make `session`'s files look last used `days` ago."""
    when = time.time() - days * 86_400
    state = repo / ".ctxagent"
    for path in [state / "sessions" / f"{session}.jsonl", state / "snapshots" / session,
                 *(state / "snapshots" / session).glob("*")]:
        if path.exists():
            os.utime(path, (when, when))


def _sessions(repo: Path) -> set[str]:
    return {p.stem for p in (repo / ".ctxagent" / "sessions").glob("*.jsonl")}


def test_sessions_prune_and_the_retention_setting(ctxagent, fake_server, repo: Path, env) -> None:
    server = fake_server([text("one"), text("two"), text("three"), text("four")])
    for task in ("first", "second", "third"):
        assert ctxagent("run", task, "--repo", str(repo), extra_env=model_env(server)).returncode == 0
        time.sleep(1.1)  # session ids carry the second they were made in
    first, second, third = sorted(_sessions(repo))
    _age(repo, first, 60)
    _age(repo, second, 45)

    dry = ctxagent("sessions", "prune", "--older-than", "30d", "--keep", "1", "--dry-run", "--repo", str(repo))
    assert dry.returncode == 0 and f"would remove {first}" in dry.stdout and f"would remove {second}" in dry.stdout
    assert _sessions(repo) == {first, second, third}, "a dry run removes nothing"
    kept = ctxagent("sessions", "prune", "--older-than", "50d", "--repo", str(repo), "--json")
    assert [r["id"] for r in json.loads(kept.stdout)["removed"]] == [first]
    assert _sessions(repo) == {second, third} and not (repo / ".ctxagent" / "snapshots" / first).exists()
    refused = ctxagent("sessions", "prune", "--repo", str(repo))
    assert refused.returncode == 2 and "--older-than" in refused.stderr

    config = Path(env["XDG_CONFIG_HOME"]) / "ctxagent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[state]\nprune_older_than_days = 30\nprune_keep = 1\n", encoding="utf-8")
    proc = ctxagent("run", "fourth", "--repo", str(repo), extra_env=model_env(server))
    assert proc.returncode == 0, proc.stderr
    assert "removed 1 session(s) unused for over 30 days" in flat(proc.stderr)
    assert second not in _sessions(repo) and third in _sessions(repo) and len(_sessions(repo)) == 2
