"""Snapshots across resume, with the real CLI and the fake server: every model call keeps its
own `<n>.json` (a resumed session numbers on, nothing is overwritten), `inspect last` is
the newest call, and each snapshot holds the request parameters the server received."""

from __future__ import annotations

import json
import time
from pathlib import Path

from ctxagent.context.record.snapshot import load_snapshot_file
from tests.e2e.conftest import model_env
from tests.support.fake_openai import text, tool_calls

PARAMS = ("max_tokens", "temperature", "stream", "stream_options")


def snapshots(repo: Path) -> dict[str, dict[int, bytes]]:
    root = repo / ".ctxagent" / "snapshots"
    return {folder.name: {int(p.stem): p.read_bytes() for p in folder.glob("*.json")} for folder in root.iterdir()}


def whole(repo: Path, session: str, n: int) -> dict:
    """Call `n`'s snapshot as read back (its file refers to the session's stored objects)."""
    return load_snapshot_file(repo / ".ctxagent" / "snapshots" / session / f"{n}.json")


def test_a_resumed_session_numbers_on_and_inspect_last_is_the_newest_call(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([tool_calls([("terminal", json.dumps({"command": "ls"}))]), text("first answer"),
                          text("second answer"), text("third answer")])
    env = model_env(server)
    assert ctxagent("run", "first task", "--repo", str(repo), "--yes", extra_env=env).returncode == 0
    [(session, first)] = snapshots(repo).items()
    assert sorted(first) == [1, 2]
    proc = ctxagent("run", "second task", "--repo", str(repo), "--resume", "last", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    after = snapshots(repo)[session]
    assert sorted(after) == [1, 2, 3], "the resumed call is call 3"
    assert {n: after[n] for n in (1, 2)} == first, "the first run's snapshots are untouched"
    snap = whole(repo, session, 3)
    assert snap["call"] == 3 and snap["report"]["call"] == 3
    assert snap["request"]["messages"][-1]["content"].endswith("second task")

    shown = ctxagent("inspect", "last", "--repo", str(repo))
    assert shown.returncode == 0, shown.stderr
    assert f"session {session}  call 3 of 1..3" in shown.stdout
    data = json.loads(ctxagent("inspect", "last", "--repo", str(repo), "--json").stdout)
    assert data["call"] == 3 and data["request"]["messages"][-1]["content"].endswith("second task")

    received = server.requests()
    for n, body in enumerate(received, 1):
        request = whole(repo, session, n)["request"]
        assert {k: request.get(k) for k in PARAMS} == {k: body.get(k) for k in PARAMS}, n
        assert request["messages"] == body["messages"] and request["tools"] == body["tools"], n
        assert whole(repo, session, n)["redacted"] is False

    proc = ctxagent("chat", "--repo", str(repo), "--resume", "last", input="third task\n/exit\n", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    final = snapshots(repo)[session]
    assert sorted(final) == [1, 2, 3, 4] and {n: final[n] for n in (1, 2, 3)} == after, "chat --resume numbers on too"
    assert whole(repo, session, 4)["request"]["messages"][-1]["content"].endswith("third task")


def test_inspect_last_follows_the_session_resumed_most_recently(ctxagent, fake_server, repo: Path) -> None:
    server = fake_server([text("a"), text("b"), text("c")])
    env = model_env(server)
    assert ctxagent("run", "task A", "--repo", str(repo), extra_env=env).returncode == 0
    [older] = snapshots(repo)
    time.sleep(1.1)  # session ids carry the second they were made in: B's sorts after A's
    assert ctxagent("run", "task B", "--repo", str(repo), extra_env=env).returncode == 0
    newer = max(snapshots(repo))
    assert newer > older
    assert ctxagent("run", "more of A", "--repo", str(repo), "--resume", older, extra_env=env).returncode == 0
    data = json.loads(ctxagent("inspect", "last", "--repo", str(repo), "--json").stdout)
    assert (data["session"], data["call"]) == (older, 2)
    assert data["request"]["messages"][-1]["content"].endswith("more of A")
