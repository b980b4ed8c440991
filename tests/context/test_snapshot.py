"""Snapshots: atomic write, read back, "last", secrets scrubbed, bad ids refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxagent.context import ContextBuilder, ContextConfig
from ctxagent.context.record.snapshot import (
    REDACTED,
    highest_call,
    list_calls,
    list_sessions,
    load_snapshot_file,
    read_snapshot,
    resolve_session,
    scrub,
    side_calls_for,
    side_calls_in,
    side_kind,
    write_side_snapshot,
    write_snapshot,
)
from ctxagent.errors import NotFoundError, StorageError

ROOT = Path(__file__).resolve().parents[2]


def test_write_and_read_back_a_builder_report(tmp_path) -> None:
    messages, report = ContextBuilder(config=ContextConfig(max_tokens=2000)).build_messages("hello", system_instructions="hi")
    path = write_snapshot(tmp_path, "20240101-120000-abcd", 0, {"model": "gpt-4o", "messages": messages}, report)
    assert path == tmp_path / "snapshots" / "20240101-120000-abcd" / "0.json"
    snap = read_snapshot(tmp_path, "20240101-120000-abcd", 0)
    assert snap["request"]["messages"] == messages and snap["report"] == json.loads(json.dumps(report))
    assert snap["call"] == 0 and snap["version"] == 2 and snap["created_at"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["0.json", "objects.jsonl"]  # no temporary files left


def test_last_session_and_last_call(tmp_path) -> None:
    for session, calls in (("20240101-120000-aaaa", 2), ("20240202-090000-bbbb", 3)):
        for n in range(calls):
            write_snapshot(tmp_path, session, n, {"messages": [{"role": "user", "content": f"{session}/{n}"}]}, {})
    assert list_sessions(tmp_path) == ["20240101-120000-aaaa", "20240202-090000-bbbb"]
    assert resolve_session(tmp_path, "last") == "20240202-090000-bbbb"
    assert list_calls(tmp_path, "20240202-090000-bbbb") == [0, 1, 2]
    assert read_snapshot(tmp_path, "last")["request"]["messages"][0]["content"] == "20240202-090000-bbbb/2"
    assert read_snapshot(tmp_path, "20240101-120000-aaaa", 0)["call"] == 0


def test_secrets_never_reach_disk(tmp_path) -> None:
    request = {
        "model": "gpt-4o", "api_key": "sk-proj-abcdefghijklmnopqrstuvwx",
        "headers": {"Authorization": "Bearer abcdefghijklmnopqrstuvwxyz", "X-Api-Key": "k" * 20},
        "messages": [{"role": "user", "content": "my key is sk-abcdefghijklmnopqrstuvwxyz123 and token mysecretvalue42"}],
        "max_tokens": 100,
    }
    report = {"budget": {"max_tokens": 100, "used_tokens": 50}}
    path = write_snapshot(tmp_path, "s1", 1, request, report, secrets=["mysecretvalue42"])
    raw = path.read_text() + (path.parent / "objects.jsonl").read_text()  # the file and what it refers to
    for secret in ("sk-proj-abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwxyz", "k" * 20, "sk-abcdefghijklmnop", "mysecretvalue42"):
        assert secret not in raw
    snap = load_snapshot_file(path)
    assert snap["request"]["max_tokens"] == 100 and snap["report"]["budget"]["used_tokens"] == 50
    assert snap["request"]["api_key"] == REDACTED


def test_scrub_leaves_ordinary_data_alone() -> None:
    data = {"tokens": 5, "prompt_tokens": 7, "messages": [{"role": "user", "content": "skip the sk- prefix"}]}
    assert scrub(data) == data


@pytest.mark.parametrize("bad", ["../etc", "a/b", "", ".hidden", "x" * 200])
def test_bad_session_ids_are_refused(tmp_path, bad: str) -> None:
    with pytest.raises(NotFoundError, match="session id"):
        write_snapshot(tmp_path, bad, 0, {}, {})


def test_missing_and_damaged_snapshots(tmp_path) -> None:
    with pytest.raises(NotFoundError, match="no snapshots"):
        read_snapshot(tmp_path, "last")
    write_snapshot(tmp_path, "s1", 0, {}, {})
    with pytest.raises(NotFoundError, match="no call 5"):
        read_snapshot(tmp_path, "s1", 5)
    (tmp_path / "snapshots" / "s1" / "1.json").write_text("{not json")
    with pytest.raises(StorageError, match="damaged"):
        read_snapshot(tmp_path, "s1", 1)
    with pytest.raises(ValueError):
        write_snapshot(tmp_path, "s1", -1, {}, {})


# -- never overwritten: a taken number gives the next free one, also between processes ------------

def test_a_taken_call_number_is_never_overwritten(tmp_path) -> None:
    first = write_snapshot(tmp_path, "s1", 1, {"messages": [{"role": "user", "content": "first"}]}, {"call": 1})
    before = first.read_bytes()
    second = write_snapshot(tmp_path, "s1", 1, {"messages": [{"role": "user", "content": "second"}]}, {"call": 1})
    assert (first.name, second.name) == ("1.json", "2.json")
    assert first.read_bytes() == before
    snap = read_snapshot(tmp_path, "s1")
    assert snap["call"] == 2 and snap["report"]["call"] == 2 and snap["request"]["messages"][0]["content"] == "second"
    assert sorted(p.name for p in first.parent.iterdir()) == ["1.json", "2.json", "objects.jsonl"]  # no temporary files left


_WRITER = """
import sys
from ctxagent.context.record.snapshot import write_snapshot
root, tag = sys.argv[1], sys.argv[2]
for i in range(1, 26):
    write_snapshot(root, "shared", i, {"messages": [{"role": "user", "content": f"{tag}-{i}"}]}, {"call": i})
"""


def test_two_processes_writing_one_session_lose_no_snapshot(tmp_path) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), tag], cwd=ROOT) for tag in "ab"]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert list_calls(tmp_path, "shared") == list(range(1, 51))
    seen = []
    for n in range(1, 51):
        snap = read_snapshot(tmp_path, "shared", n)
        assert snap["call"] == snap["report"]["call"] == n
        seen.append(snap["request"]["messages"][0]["content"])
    assert sorted(seen) == sorted(f"{tag}-{i}" for tag in "ab" for i in range(1, 26))


def test_highest_call(tmp_path) -> None:
    assert highest_call(tmp_path, "s1") == 0
    for n in (1, 2, 7):
        write_snapshot(tmp_path, "s1", n, {}, {})
    assert highest_call(tmp_path, "s1") == 7


# -- "last": the session written most recently -------------------------------------------------

def test_last_session_is_the_one_written_most_recently(tmp_path) -> None:
    old = write_snapshot(tmp_path, "20240101-120000-aaaa", 1, {}, {})
    write_snapshot(tmp_path, "20240202-090000-bbbb", 1, {}, {})
    past = old.parent.stat().st_mtime - 60
    os.utime(tmp_path / "snapshots" / "20240202-090000-bbbb", (past, past))  # b was written earlier...
    assert resolve_session(tmp_path, "last") == "20240101-120000-aaaa"  # ... a was resumed after it
    (tmp_path / "snapshots" / "20240303-000000-empty").mkdir()
    assert resolve_session(tmp_path, "last") == "20240101-120000-aaaa", "a folder without snapshots is no session"


# -- damaged files -------------------------------------------------------------------------------

@pytest.mark.parametrize("content", ["[]", "42", '"text"', "null", '{"request": [], "report": {}}',
                                     '{"report": {"packets": {}}}', '{"report": {"budget": []}}',
                                     '{"report": {"layers": {"history": 3}}}', '{"report": {"packets": [1]}}',
                                     '{"request": {"messages": "hi"}}', "", "\x00\x01", b"\xff\xfe{"])
def test_a_requested_damaged_snapshot_is_a_clear_error(tmp_path, content) -> None:
    write_snapshot(tmp_path, "s1", 1, {}, {})
    path = tmp_path / "snapshots" / "s1" / "2.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(StorageError, match=r"2\.json.*damaged"):
        read_snapshot(tmp_path, "s1", 2)


def test_last_call_falls_back_to_the_newest_readable_one_with_one_warning(tmp_path) -> None:
    for n in (1, 2, 3, 4):
        write_snapshot(tmp_path, "s1", n, {"messages": [{"role": "user", "content": f"call {n}"}]}, {})
    folder = tmp_path / "snapshots" / "s1"
    (folder / "4.json").write_text((folder / "4.json").read_text()[:50])  # truncated
    (folder / "3.json").write_text("[]")
    with pytest.warns(UserWarning) as caught:
        snap = read_snapshot(tmp_path, "last")
    assert snap["call"] == 2
    [warning] = caught
    message = str(warning.message)
    assert "\n" not in message and str(folder / "4.json") in message and str(folder / "3.json") in message
    assert "call 2" in message


def test_a_session_whose_every_snapshot_is_damaged_is_a_clear_error(tmp_path) -> None:
    write_snapshot(tmp_path, "s1", 1, {}, {})
    (tmp_path / "snapshots" / "s1" / "1.json").write_text("{")
    with pytest.raises(StorageError, match=r"1\.json.*damaged"):
        read_snapshot(tmp_path, "s1")


# -- what the file says about itself ----------------------------------------------------------------

def test_redacted_says_whether_anything_was_replaced(tmp_path) -> None:
    clean = write_snapshot(tmp_path, "s1", 1, {"messages": [{"role": "user", "content": "hello"}]}, {})
    assert json.loads(clean.read_text())["redacted"] is False
    dirty = write_snapshot(tmp_path, "s1", 2, {"messages": [{"role": "user", "content": "key mysecretvalue42"}]},
                           {}, secrets=["mysecretvalue42"])
    assert json.loads(dirty.read_text())["redacted"] is True
    quoted = write_snapshot(tmp_path, "s1", 3, {"messages": [{"role": "user", "content": f"was {REDACTED}"}]}, {})
    assert json.loads(quoted.read_text())["redacted"] is False, "a marker already in the history is not a redaction"


def test_summary_calls_are_written_scrubbed(tmp_path) -> None:
    calls = [{"trigger": "auto", "request": {"model": "m", "messages": [{"role": "user", "content": "mysecretvalue42"}],
                                             "max_tokens": 100, "stream": True}, "tokens": 12}]
    path = write_snapshot(tmp_path, "s1", 1, {"messages": []}, {}, secrets=["mysecretvalue42"], summary_calls=calls)
    snap = load_snapshot_file(path)
    assert snap["summary_calls"][0]["request"]["messages"][0]["content"] == REDACTED
    assert snap["summary_calls"][0]["request"]["max_tokens"] == 100 and snap["redacted"] is True
    assert "summary_calls" not in json.loads(write_snapshot(tmp_path, "s1", 2, {}, {}).read_text())



# -- side calls: a tool's own model call (the plan tool's) as a snapshot of its own ---------------

PLAN_DETAILS = {"made_for": {"call": 1, "turn": 1, "step": 1, "tool": "plan", "tool_call_id": "c1", "attempt": 1},
                "tokens": 30, "usage": {"prompt_tokens": 31, "completion_tokens": 5}}


def test_a_side_call_is_numbered_like_any_call_and_never_overwrites_one(tmp_path) -> None:
    write_snapshot(tmp_path, "s1", 1, {"messages": []}, {"call": 1})
    request = {"model": "m", "messages": [{"role": "user", "content": "plan it with mysecretvalue42"}], "max_tokens": 9,
               "extra_body": {"api_key": "abcdefghij123456"}}
    path = write_side_snapshot(tmp_path, "s1", 1, "plan", request, PLAN_DETAILS, secrets=["mysecretvalue42"])
    assert path.name == "2.json", "call 1 was taken: the next free number"
    snap = read_snapshot(tmp_path, "s1", 2)
    assert snap["call"] == 2 and snap["kind"] == "plan" and side_kind(snap) == "plan" and "report" not in snap
    assert snap["made_for"] == PLAN_DETAILS["made_for"] and snap["usage"] == PLAN_DETAILS["usage"]
    assert snap["request"]["messages"][0]["content"] == f"plan it with {REDACTED}"
    assert snap["request"]["extra_body"] == {"api_key": REDACTED} and snap["redacted"] is True
    assert side_kind(read_snapshot(tmp_path, "s1", 1)) is None
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == [], "no temporary file left"
    with pytest.raises(ValueError):
        write_side_snapshot(tmp_path, "s1", 3, "model", request, PLAN_DETAILS)


def test_side_calls_are_found_for_their_call_and_across_the_session(tmp_path) -> None:
    for n in (1, 4):
        write_snapshot(tmp_path, "s1", n, {"messages": [{"role": "user", "content": f"main {n}"}]}, {"call": n})
    for n, made_for in ((2, 1), (3, 1), (5, 4)):
        write_side_snapshot(tmp_path, "s1", n, "plan", {"messages": []},
                            {**PLAN_DETAILS, "made_for": {**PLAN_DETAILS["made_for"], "call": made_for}})
    assert [c["call"] for c in side_calls_for(tmp_path, "s1", 1)] == [2, 3], "up to the next main call"
    assert [c["call"] for c in side_calls_for(tmp_path, "s1", 4)] == [5]
    assert side_calls_for(tmp_path, "s1", 5) == []
    assert [c["call"] for c in side_calls_in(tmp_path, "s1")] == [2, 3, 5]
    (tmp_path / "snapshots" / "s1" / "3.json").write_text("{trunc")
    assert [c["call"] for c in side_calls_for(tmp_path, "s1", 1)] == [2], "a damaged file ends the search"
    assert [c["call"] for c in side_calls_in(tmp_path, "s1")] == [2, 5]


def test_a_main_call_mentioning_kind_is_not_taken_for_a_side_call(tmp_path) -> None:
    request = {"messages": [{"role": "user", "content": '\n "kind": "plan",\n'}]}
    write_snapshot(tmp_path, "s1", 1, request, {"kind": "plan"})
    assert side_calls_in(tmp_path, "s1") == [] and side_kind(read_snapshot(tmp_path, "s1", 1)) is None


@pytest.mark.parametrize("extra", [{"kind": 3}, {"kind": "plan", "made_for": []}, {"kind": "plan", "usage": "x"}])
def test_a_side_call_of_the_wrong_shape_is_damaged(tmp_path, extra) -> None:
    folder = tmp_path / "snapshots" / "s1"
    folder.mkdir(parents=True)
    (folder / "1.json").write_text(json.dumps({"version": 1, "call": 1, "request": {"messages": []}, **extra}))
    with pytest.raises(StorageError, match="damaged"):
        read_snapshot(tmp_path, "s1", 1)
