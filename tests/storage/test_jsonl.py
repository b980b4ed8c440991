"""JSONL transcripts: a line torn by a crash never takes the next record with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxagent.storage.files import append_jsonl, read_jsonl


def test_a_record_appended_after_a_torn_line_is_kept(tmp_path: Path) -> None:
    path = tmp_path / ".ctxagent" / "sessions" / "s.jsonl"
    append_jsonl(path, {"n": 1})
    with open(path, "ab") as handle:  # a crash in mid-append: half a record, no newline
        handle.write(b'{"n": 2, "text": "cut he')
    append_jsonl(path, {"n": 3})
    append_jsonl(path, {"n": 4})
    assert read_jsonl(path) == [{"n": 1}, {"n": 3}, {"n": 4}]
    assert path.read_bytes().endswith(b'cut he\n{"n": 3}\n{"n": 4}\n')


@pytest.mark.parametrize("start", [b"", b"\n", b'{"n": 0}\n'])
def test_whole_files_get_no_extra_blank_line(tmp_path: Path, start: bytes) -> None:
    path = tmp_path / ".ctxagent" / "log.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(start)
    append_jsonl(path, {"text": "日志 ünïcode"})
    assert path.read_bytes() == start + json.dumps({"text": "日志 ünïcode"}, ensure_ascii=False).encode() + b"\n"
