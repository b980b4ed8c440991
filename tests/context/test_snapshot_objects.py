"""Snapshot version 2 (`ctxagent.context.record.objects`, `.pack`): what repeats is stored once,
read back whole, survives a torn line, a pruned folder and a missing objects file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxagent.context.record import objects
from ctxagent.context.record.objects import OBJECTS_FILE, ObjectStore, read_objects, resolve, store_for
from ctxagent.context.record.snapshot import load_snapshot_file, read_snapshot, write_snapshot
from ctxagent.errors import StorageError

SYSTEM = {"role": "system", "content": "You are ctxagent. " * 200}
TOOLS = [{"type": "function", "function": {"name": f"t{i}", "description": "d" * 500}} for i in range(8)]


def _history(n: int) -> list[dict]:
    return [SYSTEM] + [{"role": "user" if i % 2 else "assistant", "content": f"message {i} " * 40} for i in range(n)]


def _write(tmp_path, n: int, messages: list[dict], **kw):
    return write_snapshot(tmp_path, "s1", n, {"model": "m", "messages": messages, "tools": TOOLS},
                          {"packets": [{"id": f"msg{i}", "decision": "selected"} for i in range(len(messages))]}, **kw)


def test_a_growing_history_costs_only_its_new_messages(tmp_path) -> None:
    _write(tmp_path, 1, _history(10))
    folder = tmp_path / "snapshots" / "s1"
    first = (folder / OBJECTS_FILE).stat().st_size
    _write(tmp_path, 2, _history(11))
    grown = (folder / OBJECTS_FILE).stat().st_size - first
    assert 0 < grown < 1000, "one message, one packet row and their two links"
    _write(tmp_path, 3, _history(11))
    assert (folder / OBJECTS_FILE).stat().st_size == first + grown, "the same request again adds nothing"
    for n, size in ((1, 10), (2, 11), (3, 11)):
        snap = read_snapshot(tmp_path, "s1", n)
        assert snap["request"]["messages"] == _history(size) and snap["request"]["tools"] == TOOLS
        assert [r["id"] for r in snap["report"]["packets"]] == [f"msg{i}" for i in range(size + 1)]
    assert (folder / "3.json").stat().st_size < 1500, "the call's own file holds refs, not the request"


def test_a_secret_is_scrubbed_once_and_flagged_on_every_call_that_holds_it(tmp_path) -> None:
    messages = _history(2) + [{"role": "tool", "content": "token mysecretvalue42"}]
    for n in (1, 2):
        path = _write(tmp_path, n, messages, secrets=["mysecretvalue42"])
        assert json.loads(path.read_text())["redacted"] is True
    raw = (tmp_path / "snapshots" / "s1" / OBJECTS_FILE).read_text()
    assert "mysecretvalue42" not in raw and "[REDACTED]" in raw
    assert read_snapshot(tmp_path, "s1", 2)["request"]["messages"][-1]["content"] == "token [REDACTED]"
    assert json.loads(_write(tmp_path, 3, _history(2)).read_text())["redacted"] is False


def test_a_torn_last_line_is_passed_over_and_the_next_write_starts_a_new_line(tmp_path) -> None:
    _write(tmp_path, 1, _history(3))
    path = tmp_path / "snapshots" / "s1" / OBJECTS_FILE
    with open(path, "ab") as handle:
        handle.write(b'{"id": "abc", "val')  # a crash in the middle of an append
    _write(tmp_path, 2, _history(4))
    assert read_snapshot(tmp_path, "s1", 2)["request"]["messages"] == _history(4)
    assert read_snapshot(tmp_path, "s1", 1)["request"]["messages"] == _history(3)
    assert any(line == '{"id": "abc", "val' for line in path.read_text().splitlines()), "the torn line stays alone"


def test_a_pruned_folder_is_written_whole_again(tmp_path) -> None:
    _write(tmp_path, 1, _history(3))
    folder = tmp_path / "snapshots" / "s1"
    for path in folder.iterdir():
        path.unlink()  # `sessions prune` (or a user) removed the folder's files under a live writer
    _write(tmp_path, 2, _history(3))
    assert read_snapshot(tmp_path, "s1", 2)["request"]["messages"] == _history(3)


def test_a_missing_objects_file_is_a_damaged_snapshot(tmp_path) -> None:
    path = _write(tmp_path, 1, _history(2))
    (path.parent / OBJECTS_FILE).unlink()
    with pytest.raises(StorageError, match="missing from objects.jsonl.*damaged"):
        load_snapshot_file(path)


def test_a_version_1_file_reads_as_it_is(tmp_path) -> None:
    folder = tmp_path / "snapshots" / "old"
    folder.mkdir(parents=True)
    record = {"version": 1, "session": "old", "call": 1, "request": {"messages": _history(1), "tools": TOOLS},
              "report": {"packets": [{"id": "msg1"}]}}
    (folder / "1.json").write_text(json.dumps(record), encoding="utf-8")
    assert read_snapshot(tmp_path, "old", 1) == record


def test_lists_are_chains_and_resolve_in_order() -> None:
    store = ObjectStore(Path("/nonexistent"))
    ref, _ = store.put_list(["a", "b", "c"])
    stored = {json.loads(line)["id"]: json.loads(line)["value"] for line in store._buffer}
    assert resolve(ref, stored, chain=True) == ["a", "b", "c"]
    assert store.put_list([]) == ([], False)
    with pytest.raises(ValueError, match="missing"):
        resolve("@0000000000000000", stored, chain=True)


def test_the_fsync_batch_is_flushed_every_few_calls_and_on_demand(tmp_path) -> None:
    for n in range(1, objects.SYNC_EVERY):
        _write(tmp_path, n, _history(2))
    store = store_for(tmp_path / "snapshots" / "s1")
    assert len(store._unsynced) == objects.SYNC_EVERY - 1, "written, fsync pending"
    _write(tmp_path, objects.SYNC_EVERY, _history(2))
    assert store._unsynced == [], "a full batch is fsynced"
    _write(tmp_path, objects.SYNC_EVERY + 1, _history(2))
    objects.flush_all()
    assert store._unsynced == [] and read_objects(store.path)


def test_a_change_near_the_start_costs_one_link_not_one_per_message(tmp_path) -> None:
    history = _history(60)
    _write(tmp_path, 1, history)
    path = tmp_path / "snapshots" / "s1" / OBJECTS_FILE
    before = path.read_text().splitlines()
    changed = [history[0], {"role": "user", "content": "[State] board changed"}, *history[2:]]
    _write(tmp_path, 2, changed)
    new = path.read_text().splitlines()[len(before):]
    links = [json.loads(line)["value"] for line in new if '"prev"' in line]
    assert len(links) == 1 and len(links[0]["items"]) == 61, "one link with the ids (not one per message)"
    assert read_snapshot(tmp_path, "s1", 2)["request"]["messages"] == changed
    assert read_snapshot(tmp_path, "s1", 1)["request"]["messages"] == history


def test_single_item_links_still_resolve() -> None:
    stored = {"i1": "a", "i2": "b", "l1": {"prev": None, "item": "i1"}, "l2": {"prev": "l1", "items": ["i2"]}}
    assert resolve("@l2", stored, chain=True) == ["a", "b"]
