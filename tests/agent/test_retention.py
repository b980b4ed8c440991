"""Session retention (`ctxagent.agent.retention`): which sessions `sessions prune` and the
`[state]` setting remove, and that a session's transcript and snapshots go together."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ctxagent.agent.retention import IN_USE_S, StoredSession, parse_age, prune_sessions, retention_notice, select_prunable
from ctxagent.config.state_settings import StateSettings
from ctxagent.errors import ToolInputError

NOW = 1_800_000_000.0
DAY = 86_400.0


def _rows(*ages_days: float) -> list[StoredSession]:
    return [StoredSession(f"s{i}", NOW - age * DAY, 10, []) for i, age in enumerate(ages_days)]


def _ids(rows) -> list[str]:
    return [r.id for r in rows]


def test_parse_age() -> None:
    assert parse_age("30d") == 30 * DAY and parse_age("12h") == 12 * 3600 and parse_age("2w") == 14 * DAY
    assert parse_age("90m") == 5400 and parse_age("45s") == 45 and parse_age("7") == 7 * DAY
    with pytest.raises(ToolInputError, match="30d"):
        parse_age("soon")


def test_age_keep_and_both() -> None:
    rows = _rows(0.5, 10, 40, 90)  # newest first
    assert _ids(select_prunable(rows, older_than_s=30 * DAY, keep=None, now=NOW)) == ["s2", "s3"]
    assert _ids(select_prunable(rows, older_than_s=None, keep=2, now=NOW)) == ["s2", "s3"]
    assert _ids(select_prunable(rows, older_than_s=30 * DAY, keep=3, now=NOW)) == ["s3"]
    assert _ids(select_prunable(rows, older_than_s=None, keep=0, now=NOW)) == ["s0", "s1", "s2", "s3"]
    with pytest.raises(ToolInputError, match="say what to prune"):
        select_prunable(rows, older_than_s=None, keep=None, now=NOW)


def test_a_session_in_use_is_never_removed() -> None:
    rows = [StoredSession("busy", NOW - IN_USE_S / 2, 1, [])]
    assert select_prunable(rows, older_than_s=0, keep=0, now=NOW) == []


def _session(repo: Path, sid: str, age_days: float) -> None:
    state = repo / ".ctxagent"
    (state / "sessions").mkdir(parents=True, exist_ok=True)
    (state / "snapshots" / sid).mkdir(parents=True)
    files = [state / "sessions" / f"{sid}.jsonl", state / "snapshots" / sid / "1.json",
             state / "snapshots" / sid / "objects.jsonl"]
    for path in files:
        path.write_text("{}\n", encoding="utf-8")
    when = time.time() - age_days * DAY
    for path in [*files, state / "snapshots" / sid]:
        os.utime(path, (when, when))


def test_prune_removes_transcript_and_snapshots_together(tmp_path) -> None:
    _session(tmp_path, "20250101-000000-aaaa", 60)
    _session(tmp_path, "20250301-000000-bbbb", 1)
    assert _ids(prune_sessions(tmp_path, older_than_s=30 * DAY, dry_run=True)) == ["20250101-000000-aaaa"]
    assert (tmp_path / ".ctxagent" / "sessions" / "20250101-000000-aaaa.jsonl").exists()
    [gone] = prune_sessions(tmp_path, older_than_s=30 * DAY)
    assert gone.bytes > 0
    assert not (tmp_path / ".ctxagent" / "sessions" / "20250101-000000-aaaa.jsonl").exists()
    assert not (tmp_path / ".ctxagent" / "snapshots" / "20250101-000000-aaaa").exists()
    assert (tmp_path / ".ctxagent" / "snapshots" / "20250301-000000-bbbb" / "1.json").exists()


def test_retention_setting(tmp_path) -> None:
    _session(tmp_path, "20250101-000000-aaaa", 60)
    _session(tmp_path, "20250201-000000-bbbb", 50)
    assert retention_notice(tmp_path, StateSettings(prune_older_than_days=0)) is None, "0: off"
    said = retention_notice(tmp_path, StateSettings(prune_older_than_days=30, prune_keep=1))
    assert said.startswith("removed 1 session(s) unused for over 30 days")
    assert not (tmp_path / ".ctxagent" / "sessions" / "20250101-000000-aaaa.jsonl").exists()
    assert (tmp_path / ".ctxagent" / "sessions" / "20250201-000000-bbbb.jsonl").exists(), "the newest is kept"
