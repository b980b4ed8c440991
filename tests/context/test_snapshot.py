"""Snapshots: atomic write, read back, "last", secrets scrubbed, bad ids refused."""

from __future__ import annotations

import json

import pytest

from ctxagent.context import ContextBuilder, ContextConfig
from ctxagent.context.snapshot import (
    REDACTED,
    list_calls,
    list_sessions,
    read_snapshot,
    resolve_session,
    scrub,
    write_snapshot,
)
from ctxagent.errors import NotFoundError, StorageError


def test_write_and_read_back_a_builder_report(tmp_path) -> None:
    messages, report = ContextBuilder(config=ContextConfig(max_tokens=2000)).build_messages("hello", system_instructions="hi")
    path = write_snapshot(tmp_path, "20240101-120000-abcd", 0, {"model": "gpt-4o", "messages": messages}, report)
    assert path == tmp_path / "snapshots" / "20240101-120000-abcd" / "0.json"
    snap = read_snapshot(tmp_path, "20240101-120000-abcd", 0)
    assert snap["request"]["messages"] == messages and snap["report"] == json.loads(json.dumps(report))
    assert snap["call"] == 0 and snap["version"] == 1 and snap["created_at"]
    assert [p.name for p in path.parent.iterdir()] == ["0.json"]  # no temporary files left


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
    raw = path.read_text()
    for secret in ("sk-proj-abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwxyz", "k" * 20, "sk-abcdefghijklmnop", "mysecretvalue42"):
        assert secret not in raw
    snap = json.loads(raw)
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
