"""Sessions: ids, the .ctxagent folder, transcripts, redaction, resume after a crash (C02)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctxagent.agent.events import TextDelta, TurnStart
from ctxagent.agent.session import Session, list_sessions, new_session_id
from ctxagent.context.messages import pairing_errors
from ctxagent.errors import NotFoundError

SECRET = "sk-live-abcdef0123456789"


def call(call_id: str, name: str = "terminal", args: str = '{"command":"ls"}') -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def test_session_id_format() -> None:
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", new_session_id())


def test_create_makes_gitignored_state_dir(tmp_path: Path) -> None:
    session = Session.create(tmp_path)
    assert (tmp_path / ".ctxagent" / ".gitignore").read_text() == "*\n"
    assert session.path == tmp_path / ".ctxagent" / "sessions" / f"{session.id}.jsonl"
    assert json.loads(session.path.read_text().splitlines()[0])["kind"] == "meta"


def test_records_are_appended_as_they_happen_and_deltas_skipped(tmp_path: Path) -> None:
    session = Session.create(tmp_path)
    session.record_event(TurnStart(session_id=session.id, turn=1, task="do it"))
    session.record_event(TextDelta(text="partial"))
    session.add_message({"role": "user", "content": "do it"})
    session.add_message({"role": "assistant", "content": "done"}, usage={"prompt_tokens": 10, "completion_tokens": 2})
    kinds = [json.loads(line)["kind"] for line in session.path.read_text().splitlines()]
    assert kinds == ["meta", "event", "message", "message"]
    assert "partial" not in session.path.read_text()
    [row] = list_sessions(tmp_path)
    assert (row.id, row.turns, row.task, row.tokens) == (session.id, 1, "do it", 12)


def test_secrets_are_redacted_from_every_record(tmp_path: Path) -> None:
    session = Session.create(tmp_path, secrets=[SECRET], meta={"note": f"key={SECRET}"})
    session.add_message({"role": "tool", "tool_call_id": "c", "content": f"env says {SECRET}"})
    text = session.path.read_text()
    assert SECRET not in text and "[REDACTED]" in text
    assert session.history[0]["content"].endswith(SECRET)  # memory keeps it; only the disk is scrubbed


def test_resume_repairs_a_crash_mid_tool_call(tmp_path: Path) -> None:
    session = Session.create(tmp_path)
    session.record_event(TurnStart(session_id=session.id, turn=1, task="grep TODO"))
    session.add_message({"role": "system", "content": "old system prompt"})
    session.add_message({"role": "user", "content": "grep TODO"})
    session.add_message({"role": "assistant", "content": None, "tool_calls": [call("call_a"), call("call_b")]})
    session.add_message({"role": "tool", "tool_call_id": "call_a", "content": "3 hits"})
    with open(session.path, "a") as handle:  # the crash tore the last line
        handle.write('{"kind": "message", "message": {"role": "tool", "tool_')
    resumed = Session.resume(tmp_path, "last")
    assert resumed.id == session.id and resumed.turns == 1
    assert pairing_errors(resumed.history) == []
    assert [m["role"] for m in resumed.history] == ["user", "assistant", "tool", "tool"]
    assert resumed.history[-1] == {"role": "tool", "tool_call_id": "call_b", "content": "not executed: interrupted"}


def test_resume_unknown_id_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="ctxagent chat"):
        Session.resume(tmp_path, "last")
    Session.create(tmp_path)
    with pytest.raises(NotFoundError, match="ctxagent sessions"):
        Session.resume(tmp_path, "20000101-000000-dead")
    with pytest.raises(NotFoundError):
        Session.resume(tmp_path, "../../etc/passwd")


def test_resume_goes_on_from_the_last_replaced_history(tmp_path: Path) -> None:
    """Tester finding 4: a resumed session reloaded every message and compacted it all again."""
    session = Session.create(tmp_path)
    for i in range(4):
        session.add_message({"role": "user", "content": f"question {i}"})
        session.add_message({"role": "assistant", "content": f"answer {i}"})
    compacted = [{"role": "user", "content": "question 0"}, {"role": "user", "content": "[summary] answers 0-3 given"}]
    session.replace_history(compacted)
    session.add_message({"role": "user", "content": "question 4"})
    resumed = Session.resume(tmp_path, session.id)
    assert resumed.history == [*compacted, {"role": "user", "content": "question 4"}] == session.history
    assert sum('"question 1"' in line for line in session.path.read_text().splitlines()) == 1, "the record keeps all"
